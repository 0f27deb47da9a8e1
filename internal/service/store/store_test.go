package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/internal/pgtest"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/servicetest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func databases(t *testing.T, f func(t *testing.T, dsn string)) { servicetest.Backends(t, f) }

func open(t *testing.T, dsn string) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func TestMigrateUpFromEmpty(t *testing.T) {
	databases(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn)
		v, err := s.Version(ctx)
		if err != nil || v < 1 {
			t.Fatalf("version = %d, %v; want >= 1", v, err)
		}
		s.Close()
		// Opening again migrates nothing and keeps the data.
		s2 := open(t, dsn)
		if v2, err := s2.Version(ctx); err != nil || v2 != v {
			t.Fatalf("version after reopen = %d, %v; want %d", v2, err, v)
		}
	})
}

func TestTenantsAndKeys(t *testing.T) {
	databases(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn)
		pol := store.Policy{Scorers: []string{"prescreen"}, Limits: host.Limits{MemoryMiB: 32}, Judge: store.JudgeLimits{TokenBudget: 1000}}
		a, err := s.CreateTenant(ctx, "acme", pol)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateTenant(ctx, "acme", store.Policy{}); !errors.Is(err, store.ErrExists) {
			t.Fatalf("second create: %v; want ErrExists", err)
		}
		got, err := s.Tenant(ctx, "acme")
		if err != nil || got.ID != a.ID || got.Policy.Limits.MemoryMiB != 32 || got.Policy.Judge.TokenBudget != 1000 || !got.Policy.Allows("prescreen") || got.Policy.Allows("masis") {
			t.Fatalf("tenant = %+v, %v", got, err)
		}
		if _, err := s.Tenant(ctx, "nobody"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("unknown tenant: %v", err)
		}
		hash := []byte("0123456789abcdef0123456789abcdef")
		if _, err := s.CreateKey(ctx, a.ID, hash, "sk_abc", store.ScopeRead, ""); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateKey(ctx, a.ID, []byte("bad scope"), "sk_bad", "owner", ""); err == nil || !strings.Contains(err.Error(), "ingest, read, label, admin") {
			t.Fatalf("a key with an unknown scope: %v; want an error listing the scopes", err)
		}
		if got, scope, err := s.TenantByKey(ctx, hash); err != nil || got.Name != "acme" || scope != store.ScopeRead {
			t.Fatalf("by key: %+v, %q, %v", got, scope, err)
		}
		if _, _, err := s.TenantByKey(ctx, []byte("other")); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("unknown key: %v", err)
		}
		if _, err := s.RevokeKey(ctx, a.ID, "sk_abc"); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.TenantByKey(ctx, hash); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("revoked key still authenticates: %v", err)
		}
		keys, err := s.Keys(ctx, a.ID)
		if err != nil || len(keys) != 1 || keys[0].RevokedAt == nil || keys[0].Scope != store.ScopeRead {
			t.Fatalf("keys = %+v, %v", keys, err)
		}
		pol.MaxRunsPerEvaluation = 7
		if err := s.SetTenantPolicy(ctx, a.ID, pol); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.TenantByID(ctx, a.ID); got.Policy.MaxRunsPerEvaluation != 7 {
			t.Fatalf("policy not updated: %+v", got.Policy)
		}
	})
}

func newRun(id, agent string, at time.Time) store.NewRun {
	body, _ := json.Marshal(map[string]any{"id": id, "agent": agent, "input": "q " + id, "output": "a " + id})
	return store.NewRun{ID: id, Agent: agent, Time: at, Body: body}
}

func TestRunsIdempotentNewestFirstAndIsolated(t *testing.T) {
	databases(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn)
		a, _ := s.CreateTenant(ctx, "a", store.Policy{})
		b, _ := s.CreateTenant(ctx, "b", store.Policy{})
		t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
		runs := []store.NewRun{
			newRun("r1", "triage", t0),
			newRun("r2", "triage", t0.Add(2*time.Hour)),
			newRun("r3", "triage", t0.Add(time.Hour)),
			newRun("r4", "triage", t0.Add(2*time.Hour)), // ties r2: the later ingest is newer
			newRun("x1", "assistant", t0),
		}
		pks, err := s.PutRuns(ctx, a.ID, runs)
		if err != nil {
			t.Fatal(err)
		}
		for i, pk := range pks {
			if pk == 0 {
				t.Fatalf("run %d not stored", i)
			}
		}
		again, err := s.PutRuns(ctx, a.ID, runs[:2])
		if err != nil || again[0] != 0 || again[1] != 0 {
			t.Fatalf("second put = %v, %v; want nothing stored", again, err)
		}
		if pks, err := s.PutRuns(ctx, b.ID, runs[:1]); err != nil || pks[0] == 0 {
			t.Fatalf("tenant b may use the same run id: %v, %v", pks, err)
		}
		got, err := s.Runs(ctx, a.ID, store.RunQuery{Agent: "triage", Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		if ids := runIDs(got); fmt.Sprint(ids) != "[r4 r2 r3]" {
			t.Fatalf("newest 3 = %v; want [r4 r2 r3]", ids)
		}
		next, err := s.Runs(ctx, a.ID, store.RunQuery{Agent: "triage", Limit: 3, After: &got[2]})
		if err != nil || fmt.Sprint(runIDs(next)) != "[r1]" {
			t.Fatalf("next page = %v, %v", runIDs(next), err)
		}
		since, err := s.Runs(ctx, a.ID, store.RunQuery{Agent: "triage", Limit: 10, Since: t0.Add(time.Hour)})
		if err != nil || fmt.Sprint(runIDs(since)) != "[r4 r2 r3]" {
			t.Fatalf("since = %v, %v", runIDs(since), err)
		}
		if r, err := s.Run(ctx, b.ID, "r2"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("tenant b reads a's run: %+v, %v", r, err)
		}
		if rs, err := s.RunsByPK(ctx, b.ID, pks); err != nil || len(rs) != 0 {
			t.Fatalf("tenant b reads a's runs by pk: %d, %v", len(rs), err)
		}
		agents, err := s.Agents(ctx, a.ID, "", 10)
		if err != nil || len(agents) != 2 || agents[0].Name != "assistant" || agents[1].Runs != 4 {
			t.Fatalf("agents = %+v, %v", agents, err)
		}
		if agents, _ := s.Agents(ctx, b.ID, "", 10); len(agents) != 1 || agents[0].Runs != 1 {
			t.Fatalf("tenant b agents = %+v", agents)
		}
	})
}

func runIDs(rs []store.Run) []string {
	var ids []string
	for _, r := range rs {
		ids = append(ids, r.ID)
	}
	return ids
}

func ptr[T any](v T) *T { return &v }

func TestResultsKeepHistory(t *testing.T) {
	databases(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn)
		a, _ := s.CreateTenant(ctx, "a", store.Policy{})
		b, _ := s.CreateTenant(ctx, "b", store.Policy{})
		t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
		pks, _ := s.PutRuns(ctx, a.ID, []store.NewRun{newRun("r1", "x", t0), newRun("r2", "x", t0.Add(time.Minute))})
		evaluate := func(version string, score float64) store.Evaluation {
			var e store.Evaluation
			err := s.InTx(ctx, func(tx *store.Tx) error {
				var err error
				e, err = tx.CreateEvaluation(ctx, store.NewEvaluation{TenantID: a.ID, Agent: "x", Trigger: store.TriggerRequest,
					Spec: store.Spec{Limit: 2, Scorers: []store.ScorerRef{{Name: "prescreen", Version: version}}}, RunPKs: []int64{pks[1], pks[0]}})
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			var rs []store.Result
			for _, pk := range pks {
				rs = append(rs, store.Result{TenantID: a.ID, EvaluationPK: e.PK, RunPK: pk, Scorer: "prescreen", ScorerVersion: version,
					Status: "scored", Score: ptr(score), Passed: ptr(score >= 0.5), Body: json.RawMessage(`{"status":"scored"}`)})
			}
			n, err := s.InsertResults(ctx, rs)
			if err != nil || n != 2 {
				t.Fatalf("insert = %d, %v", n, err)
			}
			// A retried job writes nothing twice.
			if n, err := s.InsertResults(ctx, rs); err != nil || n != 0 {
				t.Fatalf("insert again = %d, %v; want 0", n, err)
			}
			return e
		}
		e1 := evaluate("1.0.0", 0.2)
		e2 := evaluate("1.1.0", 0.9)
		if e1.ID == e2.ID || len(e1.ID) < 20 {
			t.Fatalf("ids %q %q", e1.ID, e2.ID)
		}
		if _, err := s.Evaluation(ctx, b.ID, e1.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("tenant b reads a's evaluation: %v", err)
		}
		got, err := s.Evaluation(ctx, a.ID, e2.ID)
		if err != nil || got.Expected != 2 || got.Spec.Scorers[0].Version != "1.1.0" {
			t.Fatalf("evaluation = %+v, %v", got, err)
		}
		runs, _ := s.EvaluationRuns(ctx, a.ID, e2.PK)
		if fmt.Sprint(runIDs(runs)) != "[r2 r1]" {
			t.Fatalf("evaluation runs = %v", runIDs(runs))
		}
		latest, err := s.LatestResults(ctx, a.ID, pks)
		if err != nil || len(latest) != 2 || latest[0].ScorerVersion != "1.1.0" || *latest[0].Score != 0.9 {
			t.Fatalf("latest = %+v, %v", latest, err)
		}
		prev, err := s.PreviousResults(ctx, a.ID, e2.PK, "prescreen", "1.1.0")
		if err != nil || len(prev) != 2 || prev[0].ScorerVersion != "1.0.0" || *prev[0].Score != 0.2 || prev[0].EvaluationID != e1.ID {
			t.Fatalf("previous = %+v, %v", prev, err)
		}
		if prev, _ := s.PreviousResults(ctx, a.ID, e1.PK, "prescreen", "1.0.0"); len(prev) != 0 {
			t.Fatalf("first evaluation has previous results: %+v", prev)
		}
		hist, err := s.RunResults(ctx, a.ID, pks[0])
		if err != nil || len(hist) != 2 || hist[0].EvaluationID != e1.ID || hist[1].EvaluationID != e2.ID {
			t.Fatalf("history = %+v, %v", hist, err)
		}
		if hist, _ := s.RunResults(ctx, b.ID, pks[0]); len(hist) != 0 {
			t.Fatalf("tenant b reads a's results")
		}
		tallies, err := s.Tallies(ctx, e2.PK)
		if err != nil || len(tallies) != 1 || tallies[0].Scored != 2 || tallies[0].PassedN != 2 || tallies[0].Sum != 1.8 {
			t.Fatalf("tallies = %+v, %v", tallies, err)
		}
		stored, err := s.StoredResults(ctx, e2.PK, pks)
		if err != nil || len(stored) != 2 || !stored[store.ResultKey{RunPK: pks[0], Scorer: "prescreen"}] {
			t.Fatalf("stored = %v, %v", stored, err)
		}
	})
}

func TestAgentPolicies(t *testing.T) {
	databases(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn)
		a, _ := s.CreateTenant(ctx, "a", store.Policy{})
		if _, err := s.AgentPolicy(ctx, a.ID, "x"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("no policy: %v", err)
		}
		p := store.AgentPolicy{Scorers: []string{"prescreen", "relevancy"}, SampleRate: 0.5, Tiered: true,
			Config: map[string]json.RawMessage{"prescreen": json.RawMessage(`{}`)}}
		if err := s.SetAgentPolicy(ctx, a.ID, "x", p); err != nil {
			t.Fatal(err)
		}
		p.SampleRate = 1
		if err := s.SetAgentPolicy(ctx, a.ID, "x", p); err != nil {
			t.Fatal(err)
		}
		got, err := s.AgentPolicy(ctx, a.ID, "x")
		if err != nil || got.SampleRate != 1 || !got.Tiered || len(got.Scorers) != 2 {
			t.Fatalf("policy = %+v, %v", got, err)
		}
		if err := s.DeleteAgentPolicy(ctx, a.ID, "x"); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteAgentPolicy(ctx, a.ID, "x"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("delete twice: %v", err)
		}
	})
}

// Keys made before scopes existed could do everything: migration 00005 makes them admin
// keys, on both databases.
func TestMigrationKeysBecomeAdmin(t *testing.T) {
	databases(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		old, err := store.OpenAt(ctx, dsn, 4)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := old.Exec(ctx, `INSERT INTO tenants (name, policy, created_at) VALUES ('acme', '{}', 1)`); err != nil {
			t.Fatal(err)
		}
		if _, err := old.Exec(ctx, `INSERT INTO api_keys (tenant_id, hash, prefix, created_at) SELECT id, $1, 'sk_old', 1 FROM tenants`, []byte("old key hash")); err != nil {
			t.Fatal(err)
		}
		old.Close()
		s := open(t, dsn)
		tn, scope, err := s.TenantByKey(ctx, []byte("old key hash"))
		if err != nil || tn.Name != "acme" || scope != store.ScopeAdmin {
			t.Fatalf("a key from before scopes: %+v, scope %q, %v; want acme's admin key", tn, scope, err)
		}
	})
}

// An insight update enqueued before its agent was deleted finds no series and writes
// none: before, locking the series inserted it again, so a deleted agent came back (seen
// as TestDeleteAgent's second deletion finding something to delete).
func TestLockSeriesOfADeletedAgent(t *testing.T) {
	databases(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn)
		tn, err := s.CreateTenant(ctx, "acme", store.Policy{})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.TouchSeries(ctx, tn.ID, "bot", []string{"prescreen"}); err != nil {
			t.Fatal(err)
		}
		if ok, err := s.LockSeries(ctx, tn.ID, "bot", "prescreen", time.Now()); err != nil || !ok {
			t.Fatalf("lock a series that exists: %v, %v", ok, err)
		}
		if _, err := s.DeleteAgent(ctx, tn.ID, "bot", nil); err != nil {
			t.Fatal(err)
		}
		if ok, err := s.LockSeries(ctx, tn.ID, "bot", "prescreen", time.Now()); err != nil || ok {
			t.Fatalf("lock the deleted agent's series: %v, %v; want false", ok, err)
		}
		if series, err := s.SeriesOf(ctx, tn.ID, "bot"); err != nil || len(series) != 0 {
			t.Fatalf("series after: %+v, %v; want none", series, err)
		}
		if _, err := s.DeleteAgent(ctx, tn.ID, "bot", nil); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("deleting it again: %v; want not found", err)
		}
	})
}

// A run's body and a result read back as the bytes stored, on both databases: before
// migration 00012, PostgreSQL kept them as JSONB and gave back its own print of them (keys
// reordered, spaces added), so the same import exported differently on each database.
func TestJSONReadsBackAsStored(t *testing.T) {
	const body = `{"output":"a","input":"q","id":"r1","agent":"x","metadata":{"z":1,"a":[1,2.50]}}`
	const result = `{"status":"scored","score":0.5,"details":{"b":true,"a":null}}`
	databases(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn)
		a, _ := s.CreateTenant(ctx, "a", store.Policy{})
		pks, err := s.PutRuns(ctx, a.ID, []store.NewRun{{ID: "r1", Agent: "x", Time: time.Unix(1, 0), Body: json.RawMessage(body)}})
		if err != nil {
			t.Fatal(err)
		}
		var e store.Evaluation
		err = s.InTx(ctx, func(tx *store.Tx) error {
			e, err = tx.CreateEvaluation(ctx, store.NewEvaluation{TenantID: a.ID, Agent: "x", Trigger: store.TriggerRequest,
				Spec: store.Spec{Limit: 1, Scorers: []store.ScorerRef{{Name: "prescreen"}}}, RunPKs: pks})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.InsertResults(ctx, []store.Result{{TenantID: a.ID, EvaluationPK: e.PK, RunPK: pks[0], Scorer: "prescreen",
			Status: "scored", Score: ptr(0.5), Body: json.RawMessage(result)}}); err != nil {
			t.Fatal(err)
		}
		r, err := s.Run(ctx, a.ID, "r1")
		if err != nil || string(r.Body) != body {
			t.Fatalf("run body read back as %s, %v; want %s", r.Body, err, body)
		}
		rs, err := s.RunResults(ctx, a.ID, pks[0])
		if err != nil || len(rs) != 1 || string(rs[0].Body) != result {
			t.Fatalf("result read back as %v, %v; want %s", rs, err, result)
		}
	})
}

// A store too large to rewrite at once keeps its JSONB columns through migration 00012,
// and the service stores and reads its runs as before.
func TestMigration00012LeavesLargeStores(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Shared(t).Database(t)
	writeAt(t, dsn, 11,
		`INSERT INTO tenants (name, policy, created_at) VALUES ('acme', '{}', 1)`,
		`INSERT INTO runs (tenant_id, run_id, agent, run_time, received_at, body)
			SELECT t.id, 'old' || i, 'x', i, i, '{"input": "q"}' FROM tenants t, generate_series(1, 100001) i`,
	)
	s := open(t, dsn)
	if v, err := s.Version(ctx); err != nil || v < 12 {
		t.Fatalf("version %d, %v; want 12 or later", v, err)
	}
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var types string
	if err := c.QueryRow(ctx, `SELECT string_agg(data_type, ',' ORDER BY table_name) FROM information_schema.columns
		WHERE (table_name, column_name) IN (('runs', 'body'), ('results', 'result')) AND table_schema = current_schema()`).Scan(&types); err != nil || types != "jsonb,jsonb" {
		t.Fatalf("column types %q, %v; want both left JSONB", types, err)
	}
	tn, _ := s.Tenant(ctx, "acme")
	if _, err := s.PutRuns(ctx, tn.ID, []store.NewRun{{ID: "new", Agent: "x", Time: time.Unix(1, 0), Body: json.RawMessage(`{"output":"a","input":"q"}`)}}); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{"old7": `{"input": "q"}`, "new": `{"input": "q", "output": "a"}`} {
		if r, err := s.Run(ctx, tn.ID, id); err != nil || string(r.Body) != want {
			t.Fatalf("run %s: %s, %v; want %s", id, r.Body, err, want)
		}
	}
}

// Runs and results stored as JSONB before migration 00012 read back as the same JSON.
func TestMigration00012CarriesJSON(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Shared(t).Database(t)
	writeAt(t, dsn, 11,
		`INSERT INTO tenants (name, policy, created_at) VALUES ('acme', '{}', 1)`,
		`INSERT INTO runs (tenant_id, run_id, agent, run_time, received_at, body) SELECT id, 'r1', 'x', 1, 1, '{"input": "q", "output": "a"}' FROM tenants`,
		`INSERT INTO evaluations (public_id, tenant_id, agent, trigger, spec, runs, expected, created_at) SELECT 'ev_x', id, 'x', 'request', '{"scorers":[]}', 1, 1, 0 FROM tenants`,
		`INSERT INTO results (tenant_id, evaluation_id, run_pk, scorer, scorer_version, status, score, result, created_at)
			SELECT e.tenant_id, e.id, r.id, 'prescreen', '1', 'scored', 1, '{"score": 1, "status": "scored"}', 0 FROM evaluations e, runs r`,
	)
	s := open(t, dsn)
	tn, err := s.Tenant(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Run(ctx, tn.ID, "r1")
	if err != nil || string(r.Body) != `{"input": "q", "output": "a"}` {
		t.Fatalf("carried run body %s, %v", r.Body, err)
	}
	rs, err := s.RunResults(ctx, tn.ID, r.PK)
	if err != nil || len(rs) != 1 || string(rs[0].Body) != `{"score": 1, "status": "scored"}` {
		t.Fatalf("carried results %v, %v", rs, err)
	}
	// Debian's server has lz4: the migration chose it for both columns.
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var methods string
	if err := c.QueryRow(ctx, `SELECT string_agg(attcompression::text, ',' ORDER BY attrelid::regclass::text) FROM pg_attribute
		WHERE (attrelid, attname) IN (('runs'::regclass, 'body'), ('results'::regclass, 'result'))`).Scan(&methods); err != nil || methods != "l,l" {
		t.Fatalf("compression of runs.body, results.result = %q, %v; want lz4 (l) for both", methods, err)
	}
}

// PreviousResults reads result_versions first, and finds other versions' results however
// they arrived: results of an earlier evaluation stored after those of a later one, the
// latest of several earlier results per run, and results stored before the table existed.
func TestPreviousResultsAcrossVersions(t *testing.T) {
	databases(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn)
		a, _ := s.CreateTenant(ctx, "a", store.Policy{})
		pks, _ := s.PutRuns(ctx, a.ID, []store.NewRun{newRun("r1", "x", time.Unix(1, 0)), newRun("r2", "x", time.Unix(2, 0))})
		var evs []store.Evaluation
		for _, v := range []string{"1", "2", "1"} {
			err := s.InTx(ctx, func(tx *store.Tx) error {
				e, err := tx.CreateEvaluation(ctx, store.NewEvaluation{TenantID: a.ID, Agent: "x", Trigger: store.TriggerRequest,
					Spec: store.Spec{Limit: 2, Scorers: []store.ScorerRef{{Name: "prescreen", Version: v}}}, RunPKs: pks})
				evs = append(evs, e)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		put := func(e store.Evaluation, version string, score float64) {
			t.Helper()
			var rs []store.Result
			for _, pk := range pks {
				rs = append(rs, store.Result{TenantID: a.ID, EvaluationPK: e.PK, RunPK: pk, Scorer: "prescreen", ScorerVersion: version,
					Status: "scored", Score: ptr(score), Body: json.RawMessage(`{"status":"scored"}`)})
			}
			if _, err := s.InsertResults(ctx, rs); err != nil {
				t.Fatal(err)
			}
		}
		// The third evaluation's results (version 1) come first, then the second's
		// (version 2): version 2 compares with nothing, the third with the second.
		put(evs[2], "1", 0.3)
		put(evs[1], "2", 0.9)
		if prev, err := s.PreviousResults(ctx, a.ID, evs[1].PK, "prescreen", "2"); err != nil || len(prev) != 0 {
			t.Fatalf("the second evaluation compares with %+v, %v; want nothing (version 1's results are later)", prev, err)
		}
		if prev, err := s.PreviousResults(ctx, a.ID, evs[2].PK, "prescreen", "1"); err != nil || len(prev) != 2 || prev[0].EvaluationID != evs[1].ID {
			t.Fatalf("the third evaluation compares with %+v, %v; want the second's", prev, err)
		}
		// The first evaluation's results (version 1) arrive last: the second now compares
		// with them.
		put(evs[0], "1", 0.1)
		prev, err := s.PreviousResults(ctx, a.ID, evs[1].PK, "prescreen", "2")
		if err != nil || len(prev) != 2 || prev[0].EvaluationID != evs[0].ID || *prev[0].Score != 0.1 {
			t.Fatalf("the second evaluation compares with %+v, %v; want the first's", prev, err)
		}
	})
}

// Results stored before migration 00013 make their versions known to PreviousResults.
func TestMigration00013CarriesResultVersions(t *testing.T) {
	databases(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		writeAt(t, dsn, 12,
			`INSERT INTO tenants (name, policy, created_at) VALUES ('acme', '{}', 1)`,
			`INSERT INTO runs (tenant_id, run_id, agent, run_time, received_at, body) SELECT id, 'r1', 'x', 1, 1, '{}' FROM tenants`,
			`INSERT INTO evaluations (public_id, tenant_id, agent, trigger, spec, runs, expected, created_at) SELECT 'ev_' || v, id, 'x', 'request', '{"scorers":[]}', 1, 1, 0
				FROM tenants, (SELECT '1' AS v UNION ALL SELECT '2') vs`,
			`INSERT INTO evaluation_runs (evaluation_id, run_pk, position) SELECT e.id, r.id, 0 FROM evaluations e, runs r`,
			`INSERT INTO results (tenant_id, evaluation_id, run_pk, scorer, scorer_version, status, score, result, created_at)
				SELECT e.tenant_id, e.id, r.id, 'prescreen', substr(e.public_id, 4), 'scored', 1, '{}', 0 FROM evaluations e, runs r`,
		)
		s := open(t, dsn)
		tn, _ := s.Tenant(ctx, "acme")
		second, err := s.Evaluation(ctx, tn.ID, "ev_2")
		if err != nil {
			t.Fatal(err)
		}
		prev, err := s.PreviousResults(ctx, tn.ID, second.PK, "prescreen", "2")
		if err != nil || len(prev) != 1 || prev[0].EvaluationID != "ev_1" {
			t.Fatalf("previous results after the migration: %+v, %v; want ev_1's", prev, err)
		}
	})
}

// A write that lands while the tenant's deletion runs (an insight update already running
// when its keys were revoked commits an insight after the deletion passed that table)
// makes the deletion run again, and it leaves nothing: before, the deletion failed on the
// tenant's foreign key, which DELETE /v1/tenant answered 500 under load.
func TestDeleteTenantOutlastsAWriteMeanwhile(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Shared(t).Database(t)
	env := servicetest.New(t, dsn, servicetest.Options{NoWorkers: true})
	s := env.Store
	tn, err := s.CreateTenant(ctx, "acme", store.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	store.SetBeforeTenantRow(func() {
		if _, err := c.Exec(ctx, `INSERT INTO insights (public_id, tenant_id, agent, scorer, kind, severity, title, evidence, opened_at, updated_at)
			VALUES ('in_late', $1, 'bot', 'prescreen', 'quality', 'warning', 't', '{}', 0, 0)`, tn.ID); err != nil {
			t.Error(err)
		}
	})
	d, err := s.DeleteTenant(ctx, tn, "test", nil)
	if err != nil {
		t.Fatalf("the tenant's deletion: %v", err)
	}
	var left int
	if err := c.QueryRow(ctx, `SELECT (SELECT COUNT(*) FROM insights WHERE tenant_id = $1) + (SELECT COUNT(*) FROM tenants WHERE id = $1)`, tn.ID).Scan(&left); err != nil || left != 0 {
		t.Fatalf("%d rows of the tenant left, %v", left, err)
	}
	if d.Insights != 1 {
		t.Fatalf("deleted %+v; want the insight written meanwhile counted", d)
	}
}

// writeAt migrates the store at dsn up to version only and runs stmts on it: rows as
// they were before a later migration.
func writeAt(t *testing.T, dsn string, version int64, stmts ...string) {
	t.Helper()
	ctx := context.Background()
	old, err := store.OpenAt(ctx, dsn, version)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	for _, q := range stmts {
		if _, err := old.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}
