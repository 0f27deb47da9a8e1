// Command size fills a store to the size a platform reaches in a month and measures what
// the service reads from it at that size: bytes per run, an agent's last N runs, a page of
// its runs, an evaluation's summary, the insight engine's window, and the newest
// migrations (-migrations). It is run by hand, not in CI (ten million runs take minutes to write and
// gigabytes of disk):
//
//	go run ./bench/size -backend sqlite -runs 10000000
//	go run ./bench/size -backend postgres -runs 10000000   # a throwaway PostgreSQL (Debian's)
//
// Runs are the repository's labelled public runs (testdata/), cycled with fresh ids, so
// their sizes are real ones; each agent's runs are evaluated in groups of -eval-runs by
// prescreen, with the result the scorer really gives each run. The plans of the same
// queries are asserted in CI (internal/service/store's TestServiceQueriesUseIndexes).
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/internal/corpus"
	"github.com/scorekit/scorekit/internal/pgtest"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/plugins/builtin"
	"github.com/scorekit/scorekit/sdk"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench/size:", err)
		os.Exit(1)
	}
}

type options struct {
	backend  string
	dsn      string
	dir      string
	runs     int
	agents   int
	evalRuns int
	reps     int
	keep     bool
	migrate  int
}

func run() error {
	var o options
	flag.StringVar(&o.backend, "backend", store.SQLite, "sqlite or postgres")
	flag.StringVar(&o.dsn, "dsn", "", "an existing empty PostgreSQL database to fill (default: start a throwaway cluster)")
	flag.StringVar(&o.dir, "dir", "", "folder for the SQLite file or the throwaway cluster (default: a temporary folder, removed at the end)")
	flag.IntVar(&o.runs, "runs", 10_000_000, "runs to store")
	flag.IntVar(&o.agents, "agents", 1000, "agents the runs are spread over")
	flag.IntVar(&o.evalRuns, "eval-runs", 100, "runs per evaluation (each agent's runs are evaluated in groups of this many)")
	flag.IntVar(&o.reps, "reps", 51, "repetitions of each query (the median is reported)")
	flag.BoolVar(&o.keep, "keep", false, "keep the filled store")
	flag.IntVar(&o.migrate, "migrations", 1, "newest migrations to take down and up again, timing each")
	flag.Parse()
	if o.runs < o.agents*o.evalRuns {
		return fmt.Errorf("-runs %d is under -agents x -eval-runs (%d): every agent needs one evaluation", o.runs, o.agents*o.evalRuns)
	}
	ctx := context.Background()
	dir := o.dir
	if dir == "" {
		d, err := os.MkdirTemp("", "scorekit-size-")
		if err != nil {
			return err
		}
		dir = d
	}
	if !o.keep {
		defer os.RemoveAll(dir)
	}
	dsn := o.dsn
	switch {
	case o.backend == store.SQLite:
		dsn = filepath.Join(dir, "size.db")
	case o.backend == store.Postgres && dsn == "":
		c, err := pgtest.Start()
		if err != nil {
			return err
		}
		defer c.Stop()
		if dsn, err = c.NewDatabase(); err != nil {
			return err
		}
	case o.backend != store.Postgres:
		return fmt.Errorf("-backend %q: want sqlite or postgres", o.backend)
	}
	st, err := store.Open(ctx, dsn)
	if err != nil {
		return err
	}
	defer st.Close()

	fmt.Printf("machine: %s/%s, %d CPUs; backend %s; %d runs over %d agents, evaluations of %d runs\n",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), o.backend, o.runs, o.agents, o.evalRuns)
	samples, err := loadSamples(ctx)
	if err != nil {
		return err
	}
	fx, err := fill(ctx, st, o, samples)
	if err != nil {
		return err
	}
	return measure(ctx, st, o, dsn, fx)
}

// sample is a public run and the result prescreen gives it.
type sample struct {
	run    sdk.Run
	result json.RawMessage
	score  float64
	passed bool
	status string
}

func loadSamples(ctx context.Context) ([]sample, error) {
	cases, err := corpus.LoadFound()
	if err != nil {
		return nil, err
	}
	reg := host.NewRegistry()
	for _, f := range builtin.Factories() {
		if err := reg.Register(host.Native(f), false); err != nil {
			return nil, err
		}
	}
	h := host.New(reg, host.WithLogger(slog.New(slog.DiscardHandler)))
	ps, err := h.Open(ctx, "prescreen", host.OpenOptions{})
	if err != nil {
		return nil, err
	}
	defer ps.Close(ctx)
	out := make([]sample, 0, len(cases))
	for _, c := range cases {
		res := ps.Score(ctx, c.Run)
		body, err := json.Marshal(res)
		if err != nil {
			return nil, err
		}
		s := sample{run: c.Run, result: body, status: string(res.Status)}
		if res.Score != nil {
			s.score = *res.Score
		}
		if res.Passed != nil {
			s.passed = *res.Passed
		}
		out = append(out, s)
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out, nil
}

type fixture struct {
	tenant      int64
	bodyBytes   int64
	evaluations []int64 // one evaluation PK per agent, its last
	fillTime    time.Duration
}

// fill writes the runs in transactions of a few thousand and, as each agent reaches
// -eval-runs new runs, an evaluation of them with their prescreen results.
func fill(ctx context.Context, st *store.Store, o options, samples []sample) (fixture, error) {
	tn, err := st.CreateTenant(ctx, "size", store.Policy{})
	if err != nil {
		return fixture{}, err
	}
	fx := fixture{tenant: tn.ID, evaluations: make([]int64, o.agents)}
	start := time.Now()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pending := make([][]int64, o.agents) // run PKs awaiting an evaluation, per agent
	pendingSample := make([][]int, o.agents)
	const txRuns = 5000
	for from := 0; from < o.runs; from += txRuns {
		n := min(txRuns, o.runs-from)
		err := st.InTx(ctx, func(tx *store.Tx) error {
			batch := make([]store.NewRun, n)
			idx := make([]int, n)
			for i := range n {
				k := from + i
				si := k % len(samples)
				r := samples[si].run
				r.ID = fmt.Sprintf("size-%09d", k)
				r.Agent = fmt.Sprintf("agent-%04d", k%o.agents)
				at := t0.Add(time.Duration(k) * time.Second)
				r.Time = &at
				body, err := json.Marshal(r)
				if err != nil {
					return err
				}
				fx.bodyBytes += int64(len(body))
				batch[i], idx[i] = store.NewRun{ID: r.ID, Agent: r.Agent, Time: at, Body: body}, si
			}
			pks, err := tx.PutRuns(ctx, tn.ID, batch)
			if err != nil {
				return err
			}
			for i, pk := range pks {
				a := (from + i) % o.agents
				pending[a] = append(pending[a], pk)
				pendingSample[a] = append(pendingSample[a], idx[i])
				if len(pending[a]) < o.evalRuns {
					continue
				}
				ev, err := tx.CreateEvaluation(ctx, store.NewEvaluation{TenantID: tn.ID, Agent: batch[i].Agent, Trigger: "arrival",
					Spec: store.Spec{Scorers: []store.ScorerRef{{Name: "prescreen", Version: "1"}}}, RunPKs: pending[a]})
				if err != nil {
					return err
				}
				results := make([]store.Result, len(pending[a]))
				for j, rpk := range pending[a] {
					s := &samples[pendingSample[a][j]]
					score, passed := s.score, s.passed
					results[j] = store.Result{TenantID: tn.ID, EvaluationPK: ev.PK, RunPK: rpk, Scorer: "prescreen", ScorerVersion: "1",
						Status: s.status, Score: &score, Passed: &passed, Body: s.result}
				}
				if _, err := tx.InsertResults(ctx, results); err != nil {
					return err
				}
				fx.evaluations[a] = ev.PK
				pending[a], pendingSample[a] = pending[a][:0], pendingSample[a][:0]
			}
			return nil
		})
		if err != nil {
			return fixture{}, fmt.Errorf("fill at run %d: %w", from, err)
		}
		if done := from + n; done%1_000_000 == 0 || done == o.runs {
			el := time.Since(start)
			fmt.Printf("  %d runs stored in %s (%.0f runs/s)\n", done, el.Round(time.Second), float64(done)/el.Seconds())
		}
	}
	fx.fillTime = time.Since(start)
	return fx, nil
}

func measure(ctx context.Context, st *store.Store, o options, dsn string, fx fixture) error {
	if err := analyze(ctx, st); err != nil {
		return err
	}
	onDisk, err := storeBytes(ctx, st, dsn)
	if err != nil {
		return err
	}
	fmt.Printf("\nfilled in %s; run bodies average %d bytes\n", fx.fillTime.Round(time.Second), fx.bodyBytes/int64(o.runs))
	fmt.Printf("on disk: %.2f GiB, %d bytes per run (its body, its row, its share of evaluations, results and indexes)\n\n",
		float64(onDisk)/(1<<30), onDisk/int64(o.runs))

	rng := rand.New(rand.NewPCG(3, 4))
	agent := func() (string, int) {
		a := rng.IntN(o.agents)
		return fmt.Sprintf("agent-%04d", a), a
	}
	type query struct {
		name string
		f    func() error
	}
	queries := []query{
		{"an agent's last 100 runs (PKs, as an evaluation picks them)", func() error {
			a, _ := agent()
			_, err := st.RunPKs(ctx, fx.tenant, store.RunQuery{Agent: a, Limit: 100})
			return err
		}},
		{"a page of 50 of an agent's runs, with bodies", func() error {
			a, _ := agent()
			_, err := st.Runs(ctx, fx.tenant, store.RunQuery{Agent: a, Limit: 50})
			return err
		}},
		{"the page after it", func() error {
			a, _ := agent()
			page, err := st.Runs(ctx, fx.tenant, store.RunQuery{Agent: a, Limit: 50})
			if err != nil || len(page) == 0 {
				return err
			}
			_, err = st.Runs(ctx, fx.tenant, store.RunQuery{Agent: a, Limit: 50, After: &page[len(page)-1]})
			return err
		}},
		{"an evaluation's summary (tallies and count)", func() error {
			_, a := agent()
			if _, err := st.Tallies(ctx, fx.evaluations[a]); err != nil {
				return err
			}
			_, err := st.CountResults(ctx, fx.evaluations[a])
			return err
		}},
		{"a page of an evaluation's results", func() error {
			_, a := agent()
			_, err := st.EvaluationResultsPage(ctx, fx.tenant, fx.evaluations[a], 0, 50)
			return err
		}},
		{"the insight engine's window (200 latest results, with bodies)", func() error {
			a, _ := agent()
			_, err := st.SeriesResults(ctx, fx.tenant, a, "prescreen", 200, true)
			return err
		}},
	}
	fmt.Printf("| query at %d runs | median | p90 |\n|---|---:|---:|\n", o.runs)
	for _, q := range queries {
		if err := q.f(); err != nil { // warm-up
			return fmt.Errorf("%s: %w", q.name, err)
		}
		ds := make([]time.Duration, o.reps)
		for i := range ds {
			t := time.Now()
			if err := q.f(); err != nil {
				return fmt.Errorf("%s: %w", q.name, err)
			}
			ds[i] = time.Since(t)
		}
		slices.Sort(ds)
		fmt.Printf("| %s | %s | %s |\n", q.name, ms(ds[len(ds)/2]), ms(ds[len(ds)*9/10]))
	}
	return timeMigrations(ctx, st, o.migrate)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

func analyze(ctx context.Context, st *store.Store) error {
	return st.WithHandle(store.Handles{
		SQLite: func(db *sql.DB) error {
			_, err := db.ExecContext(ctx, `ANALYZE`)
			return err
		},
		Postgres: func(pool *pgxpool.Pool) error {
			_, err := pool.Exec(ctx, `ANALYZE`)
			return err
		},
	})
}

// storeBytes is the store's size on disk: the SQLite file and its WAL after a checkpoint,
// or the PostgreSQL database.
func storeBytes(ctx context.Context, st *store.Store, dsn string) (total int64, err error) {
	err = st.WithHandle(store.Handles{
		SQLite: func(db *sql.DB) error {
			if _, err := db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
				return err
			}
			for _, suffix := range []string{"", "-wal"} {
				fi, err := os.Stat(dsn + suffix)
				if errors.Is(err, os.ErrNotExist) {
					continue
				}
				if err != nil {
					return err
				}
				total += fi.Size()
			}
			return nil
		},
		Postgres: func(pool *pgxpool.Pool) error {
			return pool.QueryRow(ctx, `SELECT pg_database_size(current_database())`).Scan(&total)
		},
	})
	return total, err
}

// timeMigrations takes the newest k migrations down, newest first, and up again, timing
// each step: what the next migration of each kind costs at this size.
func timeMigrations(ctx context.Context, st *store.Store, k int) error {
	fsys, err := store.Migrations(st.Database())
	if err != nil {
		return err
	}
	var db *sql.DB
	var dialect goose.Dialect
	release := func() error { return nil }
	err = st.WithHandle(store.Handles{
		SQLite: func(sdb *sql.DB) error { db, dialect = sdb, goose.DialectSQLite3; return nil },
		Postgres: func(pool *pgxpool.Pool) error {
			db, dialect = stdlib.OpenDBFromPool(pool), goose.DialectPostgres
			release = db.Close
			return nil
		},
	})
	if err != nil {
		return err
	}
	defer release()
	p, err := goose.NewProvider(dialect, db, fsys, goose.WithTableName("scorekit_migrations"))
	if err != nil {
		return err
	}
	sources := p.ListSources()
	if len(sources) < k || k < 1 {
		return fmt.Errorf("-migrations %d: there are %d", k, len(sources))
	}
	newest := sources[len(sources)-k:]
	downs := make([]time.Duration, k)
	for i := k - 1; i >= 0; i-- {
		if downs[i], err = timed(func() error { _, err := p.Down(ctx); return err }); err != nil {
			return fmt.Errorf("migration %s down: %w", filepath.Base(newest[i].Path), err)
		}
	}
	fmt.Println()
	for i, src := range newest {
		up, err := timed(func() error { _, err := p.UpByOne(ctx); return err })
		if err != nil {
			return fmt.Errorf("migration %s up: %w", filepath.Base(src.Path), err)
		}
		fmt.Printf("migration %s: down %s, up %s\n", filepath.Base(src.Path), ms(downs[i]), ms(up))
	}
	return nil
}

func timed(f func() error) (time.Duration, error) {
	t := time.Now()
	err := f()
	return time.Since(t), err
}
