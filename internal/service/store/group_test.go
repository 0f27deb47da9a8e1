package store

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

// pendingShared counts the InSharedTx callers waiting for a batch.
func (s *Store) pendingShared() int {
	g := &s.d.(*sqliteDialect).group
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.pending)
}

// Concurrent InSharedTx callers on SQLite share one transaction, and each learns its own
// outcome: a caller whose function fails (an error of its own, a statement the database
// refuses, a panic) has its writes undone and gets its error; the others are committed.
func TestSharedTxEachCallerItsOwnOutcome(t *testing.T) {
	for _, database := range []string{SQLite, Postgres} {
		t.Run(database, func(t *testing.T) {
			ctx := context.Background()
			s, ten := openTestStore(t, database)
			const n = 40
			var (
				errs  = make([]error, n)
				txs   = make([]*Tx, n)
				wg    sync.WaitGroup
				start = make(chan struct{})
			)
			call := func(i int) {
				defer wg.Done()
				errs[i] = s.InSharedTx(ctx, func(ctx context.Context, tx *Tx) error {
					txs[i] = tx
					if i == 0 && database == SQLite {
						// The first caller leads; it holds its batch open until every other
						// caller waits, so that they make one batch after it.
						close(start)
						for s.pendingShared() < n-1 {
							runtime.Gosched()
						}
					}
					tenant := ten.ID
					if i%10 == 7 {
						tenant = 1 << 40 // no such tenant: the database refuses the run
					}
					if _, err := tx.PutRuns(ctx, tenant, []NewRun{{ID: fmt.Sprintf("r%02d", i), Agent: "a", Body: []byte(`{"input":"q","output":"a"}`)}}); err != nil {
						return err
					}
					switch {
					case i%10 == 3:
						return fmt.Errorf("caller %d refuses", i)
					case i == 5:
						panic("caller 5 panics")
					}
					return nil
				})
			}
			wg.Add(1)
			if database == SQLite {
				go call(0)
				<-start
			} else {
				call(0)
			}
			for i := 1; i < n; i++ {
				wg.Add(1)
				go call(i)
			}
			wg.Wait()
			shared := map[*Tx]bool{}
			for i := range n {
				_, err := s.Run(ctx, ten.ID, fmt.Sprintf("r%02d", i))
				switch {
				case i%10 == 3:
					if errs[i] == nil || !strings.Contains(errs[i].Error(), fmt.Sprintf("caller %d refuses", i)) {
						t.Errorf("caller %d: error %v; want its own", i, errs[i])
					}
				case i%10 == 7:
					if errs[i] == nil || !strings.Contains(errs[i].Error(), "put runs") {
						t.Errorf("caller %d: error %v; want the refused insert", i, errs[i])
					}
				case i == 5:
					if !errors.Is(errs[i], errPanic) || !strings.Contains(errs[i].Error(), "caller 5 panics") {
						t.Errorf("caller 5: error %v; want its panic", errs[i])
					}
				default:
					if errs[i] != nil || err != nil {
						t.Errorf("caller %d: %v; its run: %v", i, errs[i], err)
					}
					if i > 0 {
						shared[txs[i]] = true
					}
					continue
				}
				if !errors.Is(err, ErrNotFound) {
					t.Errorf("caller %d failed but its run is stored (%v)", i, err)
				}
			}
			if database == SQLite && len(shared) != 1 {
				t.Errorf("the %d callers waiting behind the first ran in %d transactions; want 1 shared", n-1, len(shared))
			}
		})
	}
}

// What the functions of a shared transaction keep for each other (Tx.Share) and leave
// for the commit (Tx.BeforeCommit): a later function sees what earlier ones shared, a
// function that fails has its part undone, the commit's function runs once with what the
// successful ones left, and its error fails them all with nothing stored.
func TestSharedTxShareAndBeforeCommit(t *testing.T) {
	type key struct{}
	for _, hookFails := range []bool{false, true} {
		t.Run(fmt.Sprintf("hook fails %v", hookFails), func(t *testing.T) {
			ctx := context.Background()
			s, ten := openTestStore(t, SQLite)
			const n = 30
			var (
				errs  = make([]error, n)
				wg    sync.WaitGroup
				start = make(chan struct{})
				hooks int
			)
			call := func(i int) {
				defer wg.Done()
				errs[i] = s.InSharedTx(ctx, func(ctx context.Context, tx *Tx) error {
					if i == 0 {
						close(start)
						for s.pendingShared() < n-1 {
							runtime.Gosched()
						}
					}
					seen, _ := tx.Shared(key{}).([]int)
					tx.Share(key{}, append(seen[:len(seen):len(seen)], i))
					tx.BeforeCommit(key{}, func(ctx context.Context, tx *Tx) error {
						hooks++
						if hookFails {
							return errors.New("the commit's function refuses")
						}
						all := slices.Sorted(slices.Values(tx.Shared(key{}).([]int))) // in the order the callers ran
						_, err := tx.PutRuns(ctx, ten.ID, []NewRun{{ID: fmt.Sprintf("joined-%d", hooks), Agent: "a", Body: []byte(fmt.Sprintf(`{"input":"q","output":"%v"}`, all))}})
						return err
					})
					if i%10 == 3 {
						return fmt.Errorf("caller %d refuses", i)
					}
					return nil
				})
			}
			wg.Add(1)
			go call(0)
			<-start
			for i := 1; i < n; i++ {
				wg.Add(1)
				go call(i)
			}
			wg.Wait()
			// Caller 0 ran alone; the others shared one transaction.
			if hooks != 2 {
				t.Errorf("the commit's function ran %d times for two transactions; want once each", hooks)
			}
			var want []int
			for i := 1; i < n; i++ {
				switch {
				case i%10 == 3:
					if errs[i] == nil {
						t.Errorf("caller %d: no error; want its own", i)
					}
				case hookFails:
					if errs[i] == nil || !strings.Contains(errs[i].Error(), "refuses") {
						t.Errorf("caller %d: error %v; want the commit function's", i, errs[i])
					}
				default:
					if errs[i] != nil {
						t.Errorf("caller %d: %v", i, errs[i])
					}
					want = append(want, i)
				}
			}
			r, err := s.Run(ctx, ten.ID, "joined-2")
			if hookFails {
				if !errors.Is(err, ErrNotFound) {
					t.Errorf("the commit's function failed, but its run is stored (%v)", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprintf(`"output":"%v"`, want); !strings.Contains(string(r.Body), got) {
				t.Errorf("stored %s; want %s: what the successful callers shared", r.Body, got)
			}
		})
	}
}
