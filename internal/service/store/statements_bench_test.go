package store

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/scorekit/scorekit/internal/pgtest"
)

// BenchmarkStatements: the cost of a statement through the store's querier on each
// database, a point read outside a transaction, a list read (a page of 50 runs) and a
// transaction of a read and a write: what the dialects and the store's row reading add
// to every statement (measure it with -benchmem).
func BenchmarkStatements(b *testing.B) {
	ctx := context.Background()
	for _, database := range []string{SQLite, Postgres} {
		b.Run(database, func(b *testing.B) {
			dsn := filepath.Join(b.TempDir(), "s.db")
			if database == Postgres {
				dsn = pgtest.Shared(b).Database(b)
			}
			s, err := Open(ctx, dsn)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			ten, err := s.CreateTenant(ctx, "acme", Policy{})
			if err != nil {
				b.Fatal(err)
			}
			if err := s.SetAgentPolicy(ctx, ten.ID, "bot", AgentPolicy{Scorers: []string{"prescreen"}, SampleRate: 1}); err != nil {
				b.Fatal(err)
			}
			b.Run("read", func(b *testing.B) {
				for range b.N {
					if _, err := s.TenantByID(ctx, ten.ID); err != nil {
						b.Fatal(err)
					}
				}
			})
			runs := make([]NewRun, 50)
			for i := range runs {
				runs[i] = NewRun{ID: fmt.Sprintf("r%d", i), Agent: "bot", Body: json.RawMessage(`{"input":"a question","output":"an answer"}`)}
			}
			if _, err := s.PutRuns(ctx, ten.ID, runs); err != nil {
				b.Fatal(err)
			}
			b.Run("list", func(b *testing.B) {
				for range b.N {
					if rs, err := s.Runs(ctx, ten.ID, RunQuery{Agent: "bot", Limit: 50}); err != nil || len(rs) != 50 {
						b.Fatal(len(rs), err)
					}
				}
			})
			b.Run("tx", func(b *testing.B) {
				for range b.N {
					if err := s.InTx(ctx, func(tx *Tx) error {
						p, err := tx.AgentPolicy(ctx, ten.ID, "bot")
						if err != nil {
							return err
						}
						return tx.SetAgentPolicy(ctx, ten.ID, "bot", p)
					}); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
