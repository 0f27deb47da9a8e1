package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/servicetest"
)

// A promotion and a deletion of the same version at once: one of them wins and the other
// is refused with a message that says why, so the version ends promoted or deleted,
// never both, and the plain name still resolves. Before, each checked the version before
// its own transaction, and on PostgreSQL most trials left it both: the plain name then
// answered "not found".
func TestPromoteAndDeleteRace(t *testing.T) {
	const trials = 40
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		env := servicetest.New(t, dsn, servicetest.Options{NoWorkers: true})
		svc := env.Service
		tn, err := svc.CreateTenant(ctx, "acme", store.Policy{})
		if err != nil {
			t.Fatal(err)
		}
		wins := map[string]int{}
		for i := range trials {
			name := fmt.Sprintf("race-%02d", i)
			for _, cfg := range []string{`{"cutoff_min_words":1}`, `{"cutoff_min_words":2}`} {
				if _, err := svc.Publish(ctx, tn, service.PublishRequest{Name: name, Base: "prescreen", Config: json.RawMessage(cfg)}); err != nil {
					t.Fatal(err)
				}
			}
			// @1 is promoted at publish; @2 is promoted and deleted at once.
			var (
				start                 = make(chan struct{})
				wg                    sync.WaitGroup
				promoteErr, deleteErr error
			)
			wg.Add(2)
			go func() {
				defer wg.Done()
				<-start
				_, promoteErr = svc.Promote(ctx, tn, name, 2, service.PromoteOptions{})
			}()
			go func() {
				defer wg.Done()
				<-start
				deleteErr = svc.DeleteScorerVersion(ctx, tn, name, 2)
			}()
			close(start)
			wg.Wait()

			vs, err := svc.ScorerVersions(ctx, tn, name)
			if err != nil || len(vs) != 2 {
				t.Fatalf("trial %d: versions %+v, %v", i, vs, err)
			}
			if v := vs[1]; v.Promoted && v.Deleted {
				t.Fatalf("trial %d: %s is both promoted and deleted (promote: %v; delete: %v)", i, v.Ref, promoteErr, deleteErr)
			}
			switch {
			case promoteErr == nil && deleteErr == nil:
				t.Fatalf("trial %d: both the promotion and the deletion went through", i)
			case promoteErr == nil:
				if !vs[1].Promoted || !errors.Is(deleteErr, service.ErrRefused) || !strings.Contains(deleteErr.Error(), "is the promoted version; promote another first") {
					t.Fatalf("trial %d: promoted first, then the deletion answered %v; want it refused as the promoted version", i, deleteErr)
				}
				wins["promote"]++
			case deleteErr == nil:
				if !vs[1].Deleted || !vs[0].Promoted || !errors.Is(promoteErr, service.ErrRefused) || !strings.Contains(promoteErr.Error(), "was deleted; promote a version that is not") {
					t.Fatalf("trial %d: deleted first, then the promotion answered %v; want it refused as deleted", i, promoteErr)
				}
				wins["delete"]++
			default:
				t.Fatalf("trial %d: both refused: promote %v; delete %v", i, promoteErr, deleteErr)
			}
			// What an evaluation or an agent policy naming the plain name gets.
			if _, err := env.Cache.Resolve(ctx, tn, name); err != nil {
				t.Fatalf("trial %d: the plain name %q does not resolve: %v", i, name, err)
			}
		}
		t.Logf("%d trials: %v", trials, wins)
	})
}
