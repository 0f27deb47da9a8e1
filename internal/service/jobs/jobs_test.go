package jobs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/scorekit/scorekit/host/broker"
	"github.com/scorekit/scorekit/internal/judgetest"
	"github.com/scorekit/scorekit/internal/pgtest"
	"github.com/scorekit/scorekit/internal/service/jobs"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/servicetest"
	"github.com/scorekit/scorekit/sdk"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func backends(t *testing.T, f func(t *testing.T, dsn string)) { servicetest.Backends(t, f) }

// newJudge returns a judge broker at srv with no retries of its own: the engine's retries
// are under test.
func newJudge(t *testing.T, srv *judgetest.Server) *broker.Broker {
	b, err := broker.New(broker.Config{BaseURL: srv.URL(), Model: "judge-model", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

type fixture struct {
	st     *store.Store
	eng    *jobs.Queue
	tenant store.Tenant
}

// newFixture opens the service on dsn with service.Open, as the command line does (through
// servicetest), and its tenant acme (made by the first fixture on dsn). Its workers are
// working. The job defaults differ from servicetest's: retries after 20 ms, and River's
// rescue delay, so that no job is rescued unless a test asks for it.
func newFixture(t *testing.T, dsn string, o servicetest.Options) *fixture {
	ctx := context.Background()
	if o.Jobs.RetryPolicy == nil {
		o.Jobs.RetryPolicy = jobs.FixedRetry(20 * time.Millisecond)
	}
	if o.Jobs.RescueAfter == 0 {
		o.Jobs.RescueAfter = 10 * time.Minute
	}
	env := servicetest.New(t, dsn, o)
	tenant, err := env.Store.CreateTenant(ctx, "acme", store.Policy{})
	if errors.Is(err, store.ErrExists) {
		tenant, err = env.Store.Tenant(ctx, "acme")
	}
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{st: env.Store, eng: env.Queue, tenant: tenant}
}

// putRuns stores n runs of agent, each with its own question; odd runs have an empty
// output (the pre-screen fails them) unless full.
func (f *fixture) putRuns(t *testing.T, agent string, n int, full ...bool) []int64 {
	var runs []store.NewRun
	t0 := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		out := fmt.Sprintf("Paris has been the capital of France since year %d.", 1000+i)
		if i%2 == 1 && len(full) == 0 {
			out = ""
		}
		id := fmt.Sprintf("%s-%04d", agent, i)
		body, _ := json.Marshal(sdk.Run{ID: id, Agent: agent, Input: fmt.Sprintf("Since when is Paris the capital of France? (asked %d)", i), Output: out})
		runs = append(runs, store.NewRun{ID: id, Agent: agent, Time: t0.Add(time.Duration(i) * time.Minute), Body: body})
	}
	pks, err := f.st.PutRuns(context.Background(), f.tenant.ID, runs)
	if err != nil {
		t.Fatal(err)
	}
	return pks
}

func (f *fixture) evaluate(t *testing.T, agent string, pks []int64, spec store.Spec) store.Evaluation {
	ctx := context.Background()
	var ev store.Evaluation
	err := f.st.InTx(ctx, func(tx *store.Tx) error {
		var err error
		ev, err = tx.CreateEvaluation(ctx, store.NewEvaluation{TenantID: f.tenant.ID, Agent: agent, Trigger: store.TriggerRequest, Spec: spec, RunPKs: pks})
		if err != nil {
			return err
		}
		return f.eng.Enqueue(ctx, tx, ev, pks)
	})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

func (f *fixture) wait(t *testing.T, ev store.Evaluation) []store.Result {
	ctx := context.Background()
	deadline := time.Now().Add(60 * time.Second)
	for {
		n, err := f.st.CountResults(ctx, ev.PK)
		if err != nil {
			t.Fatal(err)
		}
		if n == ev.Expected {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("evaluation has %d of %d results after 60s", n, ev.Expected)
		}
		time.Sleep(20 * time.Millisecond)
	}
	rs, err := f.st.EvaluationResults(ctx, f.tenant.ID, ev.PK)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func TestEveryResultOnceAcrossChunks(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		f := newFixture(t, dsn, servicetest.Options{Jobs: jobs.Options{Workers: 3, ChunkSize: 7}})
		pks := f.putRuns(t, "triage", 50)
		ev := f.evaluate(t, "triage", pks, store.Spec{Scorers: []store.ScorerRef{{Name: "prescreen", Version: "x"}, {Name: "completeness", Version: "x"}}})
		rs := f.wait(t, ev)
		seen := map[string]int{}
		scored := 0
		for _, r := range rs {
			seen[fmt.Sprint(r.RunPK, r.Scorer)]++
			if r.Status == "scored" {
				scored++
			}
			if r.ScorerVersion == "x" || r.ScorerVersion == "" {
				t.Fatalf("result carries the spec's version %q, not the scorer's", r.ScorerVersion)
			}
		}
		if len(rs) != 100 || len(seen) != 100 || scored != 100 {
			t.Fatalf("%d results, %d distinct, %d scored; want 100 each", len(rs), len(seen), scored)
		}
		// The empty outputs fail the pre-screen: real scores, not a constant.
		tallies, _ := f.st.Tallies(context.Background(), ev.PK)
		for _, tl := range tallies {
			if tl.Scorer == "prescreen" && tl.PassedN != 25 {
				t.Fatalf("prescreen passed %d of 50; want the 25 non-empty outputs", tl.PassedN)
			}
		}
	})
}

func TestTransientJudgeFailures(t *testing.T) {
	for _, tt := range []struct {
		name       string
		failFirst  int // judge answers 500 to this many requests, then a verdict
		wantStatus string
	}{
		{"retried until the judge answers", 4, "scored"},
		{"failed with the error after the last attempt", 1000, "failed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			backends(t, func(t *testing.T, dsn string) {
				srv := judgetest.New(
					judgetest.Rule{Status: 500, Times: tt.failFirst},
					judgetest.Rule{Reply: `{"reasoning": "it answers the question", "score": 1}`},
				)
				defer srv.Close()
				f := newFixture(t, dsn, servicetest.Options{Judge: newJudge(t, srv), Jobs: jobs.Options{Workers: 2, ChunkSize: 2, MaxAttempts: 3}})
				pks := f.putRuns(t, "a", 4, true)
				ev := f.evaluate(t, "a", pks, store.Spec{Scorers: []store.ScorerRef{{Name: "relevancy", Judge: true}}})
				rs := f.wait(t, ev)
				for _, r := range rs {
					if r.Status != tt.wantStatus || r.JudgeModel != "judge-model" {
						t.Fatalf("run %s: status %s judge %q; want %s: %s", r.RunID, r.Status, r.JudgeModel, tt.wantStatus, r.Body)
					}
					if r.Status == "failed" {
						var res sdk.Result
						_ = json.Unmarshal(r.Body, &res)
						if r.Score != nil || res.Error == nil || !strings.Contains(res.Error.Message, "500") {
							t.Fatalf("a failed result must carry the error and no score: %s", r.Body)
						}
					}
				}
				if len(rs) != 4 {
					t.Fatalf("%d results, want 4", len(rs))
				}
			})
		})
	}
}

func TestTieredAsksTheJudgeOnlyAfterThePrescreenPasses(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		srv := judgetest.New(judgetest.Rule{Reply: `{"reasoning": "it answers the question", "score": 1}`})
		defer srv.Close()
		f := newFixture(t, dsn, servicetest.Options{Judge: newJudge(t, srv), Jobs: jobs.Options{Workers: 2}})
		pks := f.putRuns(t, "a", 10)
		ev := f.evaluate(t, "a", pks, store.Spec{Tiered: true, Scorers: []store.ScorerRef{{Name: "relevancy", Judge: true}}})
		rs := f.wait(t, ev)
		skipped := 0
		for _, r := range rs {
			if r.Status == "skipped" {
				skipped++
			}
		}
		if skipped != 5 || srv.Calls() != 5 {
			t.Fatalf("%d skipped, %d judge calls; want the 5 empty outputs skipped and 5 calls", skipped, srv.Calls())
		}
	})
}

// A job whose worker died stays running in River's table; the rescuer gives it back
// after RescueAfter and it completes without writing a result twice.
func TestStuckJobIsRescued(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		// A process that enqueued, with no workers of its own.
		o := servicetest.Options{NoWorkers: true, Jobs: jobs.Options{ChunkSize: 5, RescueAfter: 2 * time.Second}}
		f := newFixture(t, dsn, o)
		pks := f.putRuns(t, "a", 10)
		ev := f.evaluate(t, "a", pks, store.Spec{Scorers: []store.ScorerRef{{Name: "prescreen"}}})
		// A dead worker: the first job was taken and half its results written, then nothing.
		part := []store.Result{{TenantID: f.tenant.ID, EvaluationPK: ev.PK, RunPK: pks[0], Scorer: "prescreen", ScorerVersion: "dead",
			Status: "scored", Score: new(float64), Body: json.RawMessage(`{"status":"scored","score":0}`)}}
		if _, err := f.st.InsertResults(context.Background(), part); err != nil {
			t.Fatal(err)
		}
		if err := markRunning(f.st); err != nil {
			t.Fatal(err)
		}
		// A worker process starts.
		o.NoWorkers, o.Jobs.Workers = false, 2
		rs := newFixture(t, dsn, o).wait(t, ev)
		if len(rs) != 10 {
			t.Fatalf("%d results, want 10", len(rs))
		}
		for _, r := range rs {
			if r.RunPK == pks[0] && r.ScorerVersion != "dead" {
				t.Fatalf("the rescued job wrote run %s again", r.RunID)
			}
		}
	})
}

// markRunning makes the first job look taken by a worker that died an hour ago.
func markRunning(st *store.Store) error {
	ctx := context.Background()
	past := time.Now().Add(-time.Hour)
	q := `UPDATE river_job SET state = 'running', attempt = 1, attempted_at = $1 WHERE id = (SELECT MIN(id) FROM river_job)`
	if st.Pool() != nil {
		_, err := st.Pool().Exec(ctx, q, past)
		return err
	}
	_, err := st.SQLDB().ExecContext(ctx, strings.Replace(q, "$1", "?", 1), past.UTC().Format("2006-01-02 15:04:05.999999"))
	return err
}

// A job that commits results closes the channel Stored returned before it, which is what
// wakes a waiter in the same process; with no job nothing closes it.
func TestStoredSignalsCommits(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		f := newFixture(t, dsn, servicetest.Options{Jobs: jobs.Options{Workers: 1, ChunkSize: 10}})
		idle := f.eng.Stored()
		select {
		case <-idle:
			t.Fatal("Stored's channel closed with no job run")
		default:
		}
		pks := f.putRuns(t, "triage", 10)
		ev := f.evaluate(t, "triage", pks, store.Spec{Scorers: []store.ScorerRef{{Name: "prescreen", Version: "x"}}})
		select {
		case <-idle:
		case <-time.After(60 * time.Second):
			t.Fatal("a job committed no signal within 60s")
		}
		f.wait(t, ev)
		if next := f.eng.Stored(); next == idle {
			t.Fatal("Stored returned the closed channel again; a new waiter would never sleep")
		}
	})
}

// A judge whose reasoning holds a NUL: the results are stored with U+FFFD in its place
// and flagged, the evaluation ends on both backends (PostgreSQL refuses a NUL in JSON),
// and the answer is not cached, so a second evaluation asks the judge again.
func TestJudgeAnswerWithNUL(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		srv := judgetest.New(judgetest.Rule{Reply: `{"reasoning": "it answers \u0000 the question", "score": 1}`})
		defer srv.Close()
		b := newJudge(t, srv)
		f := newFixture(t, dsn, servicetest.Options{Judge: b, Jobs: jobs.Options{Workers: 2, ChunkSize: 2, MaxAttempts: 2}})
		pks := f.putRuns(t, "a", 4, true)
		spec := store.Spec{Scorers: []store.ScorerRef{{Name: "relevancy", Judge: true}}}
		for round := range 2 {
			rs := f.wait(t, f.evaluate(t, "a", pks, spec))
			for _, r := range rs {
				var res sdk.Result
				if err := json.Unmarshal(r.Body, &res); err != nil {
					t.Fatal(err)
				}
				if r.Status != "scored" || !strings.Contains(res.Reason, "\uFFFD") || strings.ContainsRune(res.Reason, 0) || !slices.Contains(res.Flags, jobs.FlagTextRepaired) {
					t.Fatalf("round %d, run %s: %s; want scored, U+FFFD for the NUL, flagged %s", round, r.RunID, r.Body, jobs.FlagTextRepaired)
				}
			}
		}
		if u := b.Usage("acme"); u.CacheHits != 0 || srv.Calls() != 8 {
			t.Fatalf("%d cache hits, %d judge calls; want 0 and 8: an answer the store must repair is not cached", u.CacheHits, srv.Calls())
		}
	})
}

// A job that cannot write a result (the database refuses it: a trigger here) ends that
// result failed with the reason on its last attempt; the other results are stored and
// the evaluation ends.
func TestUnwritableResultEndsFailed(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		f := newFixture(t, dsn, servicetest.Options{Jobs: jobs.Options{Workers: 1, ChunkSize: 4, MaxAttempts: 2}})
		pks := f.putRuns(t, "a", 4, true)
		if err := refuseScored(f.st, pks[2]); err != nil {
			t.Fatal(err)
		}
		rs := f.wait(t, f.evaluate(t, "a", pks, store.Spec{Scorers: []store.ScorerRef{{Name: "prescreen"}}}))
		for _, r := range rs {
			var res sdk.Result
			_ = json.Unmarshal(r.Body, &res)
			switch {
			case r.RunPK == pks[2]:
				if r.Status != "failed" || res.Error == nil || !strings.Contains(res.Error.Message, "the result could not be stored") || !strings.Contains(res.Error.Message, "disk says no") {
					t.Fatalf("the unwritable result: %s; want failed naming why", r.Body)
				}
			case r.Status != "scored":
				t.Fatalf("run %s: %s; want scored", r.RunID, r.Body)
			}
		}
	})
}

// refuseScored makes the database refuse a scored result for the run pk, as a full disk
// or a constraint would.
func refuseScored(st *store.Store, pk int64) error {
	ctx := context.Background()
	if st.Pool() != nil {
		_, err := st.Pool().Exec(ctx, fmt.Sprintf(`
			CREATE FUNCTION refuse_scored() RETURNS trigger AS $$
			BEGIN
				IF NEW.run_pk = %d AND NEW.status = 'scored' THEN RAISE EXCEPTION 'disk says no'; END IF;
				RETURN NEW;
			END $$ LANGUAGE plpgsql;
			CREATE TRIGGER refuse_scored BEFORE INSERT ON results FOR EACH ROW EXECUTE FUNCTION refuse_scored();`, pk))
		return err
	}
	_, err := st.SQLDB().ExecContext(ctx, fmt.Sprintf(`CREATE TRIGGER refuse_scored BEFORE INSERT ON results
		WHEN NEW.run_pk = %d AND NEW.status = 'scored' BEGIN SELECT RAISE(ABORT, 'disk says no'); END`, pk))
	return err
}
