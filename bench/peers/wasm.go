package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/wasm"
)

// wasmRegistry loads the heuristic WASM plugin from dir (a folder holding its manifest and
// module; run.sh builds both) and registers its scorers in reg.
func wasmRegistry(ctx context.Context, reg *host.Registry, dir string) (*host.Registry, func(), error) {
	if dir == "" {
		return nil, nil, fmt.Errorf("score: runtime wasm needs -plugins DIR, the folder holding heuristic.plugin.json (bench/peers/run.sh builds it)")
	}
	eng, err := wasm.NewEngine(ctx, wasm.Options{CacheDir: filepath.Join(os.TempDir(), "scorekit-peers-wazero")})
	if err != nil {
		return nil, nil, fmt.Errorf("score: %w", err)
	}
	loaded, err := eng.LoadDir(ctx, reg, dir)
	if err == nil {
		err = loaded.Err()
	}
	if err != nil {
		_ = eng.Close(ctx)
		return nil, nil, fmt.Errorf("score: %w", err)
	}
	return reg, func() { _ = eng.Close(ctx) }, nil
}
