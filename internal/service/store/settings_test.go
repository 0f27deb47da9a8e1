package store

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// BenchmarkSQLiteSettings: runs/s stored by 32 writers at once, one email-sized run
// each, with the statements an arrival adds (the agent's policy, its open evaluation,
// joining it), through InSharedTx as POST /v1/runs does, under each candidate setting of
// SQLite. Each variant changes one pragma of the store's own; ratio is against the
// store's settings in the same iteration.
func BenchmarkSQLiteSettings(b *testing.B) {
	base := sqlitePragmas
	defer func() { sqlitePragmas = base }()
	with := func(name, value string) []string {
		out := []string{}
		for _, p := range base {
			if !strings.HasPrefix(p, name+"(") {
				out = append(out, p)
			}
		}
		if value == "" {
			return out
		}
		return append(out, name+"("+value+")")
	}
	variants := []struct {
		name    string
		pragmas []string
	}{
		{"store", base},
		{"synchronous=FULL", with("synchronous", "FULL")},
		{"journal=DELETE", with("journal_mode", "DELETE")},
		{"cache=64MiB", with("cache_size", "-65536")},
		{"autocheckpoint=10000", with("wal_autocheckpoint", "10000")},
		{"mmap=256MiB", with("mmap_size", "268435456")},
	}
	body, _ := json.Marshal(map[string]string{"input": strings.Repeat("Dear team, the quarterly report is attached. ", 20),
		"output": strings.Repeat("Filed under finance; no reply needed. ", 12)})
	elapsed := make([]time.Duration, len(variants))
	const runs, writers = 4000, 32
	for range b.N {
		for i, v := range variants {
			sqlitePragmas = v.pragmas
			elapsed[i] += storeConcurrently(b, body, runs, writers)
		}
	}
	for i, v := range variants {
		b.ReportMetric(float64(runs*b.N)/elapsed[i].Seconds(), "runs/s_"+v.name)
		if i > 0 {
			b.ReportMetric(elapsed[0].Seconds()/elapsed[i].Seconds(), "ratio_"+v.name)
		}
	}
}

// storeConcurrently stores runs runs from writers goroutines on a fresh store and returns
// how long it took.
func storeConcurrently(b *testing.B, body []byte, runs, writers int) time.Duration {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(b.TempDir(), "settings.db"))
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
	work := make(chan int)
	var wg sync.WaitGroup
	start := time.Now()
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				err := s.InSharedTx(ctx, func(ctx context.Context, tx *Tx) error {
					pks, err := tx.PutRuns(ctx, ten.ID, []NewRun{{ID: fmt.Sprintf("r%06d", i), Agent: "bot", Body: body}})
					if err != nil {
						return err
					}
					if _, err := tx.AgentPolicy(ctx, ten.ID, "bot"); err != nil {
						return err
					}
					ev, err := tx.OpenArrival(ctx, ten.ID, "bot")
					if err != nil {
						if ev, err = tx.CreateArrival(ctx, ten.ID, "bot", Spec{Scorers: []ScorerRef{{Name: "prescreen"}}}); err != nil {
							return err
						}
					}
					if err := tx.AddArrivalRuns(ctx, ev.PK, ev.Positions, pks); err != nil {
						return err
					}
					ev.Runs, ev.Positions = ev.Runs+int64(len(pks)), ev.Positions+int64(len(pks))
					ev.Open = ev.Runs < 1000
					return tx.UpdateArrival(ctx, ev)
				})
				if err != nil {
					b.Error(err)
				}
			}
		}()
	}
	for i := range runs {
		work <- i
	}
	close(work)
	wg.Wait()
	return time.Since(start)
}
