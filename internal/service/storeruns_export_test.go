package service

import (
	"context"

	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/sdk"
)

// StoreTypedRuns stores runs as the OTLP path does: typed, never encoded as an import.
func StoreTypedRuns(ctx context.Context, s *Service, t store.Tenant, runs []sdk.Run) (ImportResult, error) {
	items := make([]runItem, len(runs))
	for i, r := range runs {
		items[i] = runItem{line: i + 1, run: r}
	}
	return s.storeRuns(ctx, t, items, storeOptions{})
}
