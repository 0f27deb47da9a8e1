package service_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/stdlib"

	"github.com/scorekit/scorekit/host/broker"
	"github.com/scorekit/scorekit/internal/seed"
	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/insights"
	"github.com/scorekit/scorekit/internal/service/jobs"
	"github.com/scorekit/scorekit/internal/service/secrets"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/servicetest"
	"github.com/scorekit/scorekit/sdk"
)

// seeded is a tenant with something in every table a tenant fills.
type seeded struct {
	t    store.Tenant
	key  string
	runs []sdk.Run // email-triage runs, oldest first
}

// seedTenant gives a tenant keys, a dashboard session, runs of two agents, an arrival
// policy and the evaluation it starts, a requested evaluation with its results, insight
// settings and series, an insight whose evidence names a run, and an audit record.
func seedTenant(t *testing.T, env *servicetest.Env, name string, set seed.Set) seeded {
	t.Helper()
	ctx := context.Background()
	svc := env.Service
	tn, err := svc.CreateTenant(ctx, name, store.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	key, k, err := svc.CreateKey(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	tok := sha256.Sum256([]byte(name + "-session"))
	if err := svc.Store().CreateSession(ctx, tok[:], tn.ID, k.ID, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.SetAgentPolicy(ctx, tn, seed.AgentEmailTriage, store.AgentPolicy{Scorers: []string{"prescreen"}, SampleRate: 1}); err != nil {
		t.Fatal(err)
	}
	runs := set.EmailTriage[:12]
	for _, f := range []seed.File{{Runs: runs}, {Runs: set.Assistant[:4]}} {
		res, err := svc.ImportRuns(ctx, tn, jsonl(t, f), service.ImportOptions{})
		if err != nil || res.Stored != len(f.Runs) {
			t.Fatalf("import: %+v, %v", res, err)
		}
		for _, id := range res.Evaluations {
			if v, err := svc.WaitEvaluation(ctx, tn, id, 30*time.Second, service.ViewOptions{}); err != nil || v.Status != service.StatusDone {
				t.Fatalf("arrival evaluation: %s, %v", v.Status, err)
			}
		}
	}
	ev, err := svc.CreateEvaluation(ctx, tn, seed.AgentEmailTriage, service.EvaluationRequest{Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := svc.WaitEvaluation(ctx, tn, ev.ID, 30*time.Second, service.ViewOptions{}); err != nil || v.Status != service.StatusDone {
		t.Fatalf("evaluation: %s, %v", v.Status, err)
	}
	if err := svc.SetExperimental(ctx, tn, []string{"relevancy"}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Store().ApplyInsights(ctx, tn.ID, nil, insights.Changes{Opened: []insights.Insight{{
		Agent: seed.AgentEmailTriage, Scorer: "prescreen", Kind: insights.KindQuality, Severity: insights.SeverityWarning,
		Title: "seeded", Evidence: insights.Evidence{Worst: []insights.Example{
			{RunID: runs[11].ID, RunTime: *runs[11].Time, Reason: "quotes " + runs[11].ID},
			{RunID: runs[0].ID, RunTime: *runs[0].Time},
		}},
	}}}); err != nil {
		t.Fatal(err)
	}
	if err := svc.RefreshInsights(ctx, tn, seed.AgentEmailTriage); err != nil {
		t.Fatal(err)
	}
	if err := svc.Store().AddAudit(ctx, tn, store.AuditEntry{Actor: "test", Action: store.AuditExport, Subject: name}, nil); err != nil {
		t.Fatal(err)
	}
	// A label of the newest run, and a span of a trace whose agent span has not come.
	passed := true
	if _, _, err := svc.PutLabel(ctx, tn, runs[11].ID, "prescreen", service.LabelInput{Labeller: "ann", LabelValue: service.LabelValue{Passed: &passed}}); err != nil {
		t.Fatal(err)
	}
	if err := svc.Store().PutOpenSpans(ctx, tn.ID, []store.OpenSpan{{TraceID: "t1", SpanID: "s1", ParentSpanID: "s0", Span: []byte("span")}}, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	return seeded{t: tn, key: key, runs: runs}
}

// database opens the store's database for the test's own queries.
func database(t *testing.T, st *store.Store) *sql.DB {
	if st.SQLDB() != nil {
		return st.SQLDB()
	}
	db := stdlib.OpenDBFromPool(st.Pool())
	t.Cleanup(func() { db.Close() })
	return db
}

// tables lists every table of the store's database with its columns.
func tables(t *testing.T, st *store.Store, db *sql.DB) map[string][]string {
	t.Helper()
	q := `SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%'`
	if st.Database() == store.Postgres {
		q = `SELECT c.table_name, c.column_name FROM information_schema.columns c JOIN information_schema.tables t
			ON t.table_schema = c.table_schema AND t.table_name = c.table_name
			WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'`
	}
	rows, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var table, col string
		if err := rows.Scan(&table, &col); err != nil {
			t.Fatal(err)
		}
		out[table] = append(out[table], col)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func count(t *testing.T, db *sql.DB, q string, args ...any) int {
	t.Helper()
	var n int
	if err := db.QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// noTenantData says why a table without tenant_id holds no row of a tenant once it is
// deleted. A new table belongs either here, with the query that proves it, or has a
// tenant_id (and is emptied by store.DeleteTenant).
var noTenantData = map[string]string{
	"scorekit_migrations": "the schema's version",
	"river_migration":     "River's schema version",
	"river_leader":        "which River client leads",
	"river_queue":         "River's queue names",
	"river_client":        "River's clients",
	"river_client_queue":  "River's clients' queues",
	"river_notification":  "River's notices to its clients (queue names)",
	"tenants":             "checked by id",
	"evaluation_runs":     "checked by the deleted tenant's evaluations and runs",
	"river_job":           "checked by the tenant in the jobs' arguments",
}

func TestDeleteTenantLeavesNothing(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		keyring, err := secrets.New(secrets.NewKey())
		if err != nil {
			t.Fatal(err)
		}
		// A judge no call reaches (the seed scores with prescreen), for the tenants' keys.
		br, err := broker.New(broker.Config{BaseURL: "http://127.0.0.1:1/v1", Model: "m", APIKey: "sk-operator", TokenBudget: -1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = br.Close() })
		env := servicetest.New(t, dsn, servicetest.Options{Secrets: keyring, Judge: br})
		svc := env.Service
		set := seedSet(t)
		gone := seedTenant(t, env, "gone", set)
		kept := seedTenant(t, env, "kept", set)
		for _, s := range []seeded{gone, kept} {
			if err := svc.SetJudgeKey(ctx, s.t, broker.DefaultEndpoint, "sk-tenant-0123456789"); err != nil {
				t.Fatal(err)
			}
		}
		// Published scorers: a configured one, and a module (stored per tenant).
		module := okModule(t)
		for _, s := range []seeded{gone, kept} {
			for _, req := range []service.PublishRequest{{Name: "mine", Base: "prescreen"}, {Name: "module", Module: module}} {
				if _, err := svc.Publish(ctx, s.t, req); err != nil {
					t.Fatal(err)
				}
			}
		}
		st := svc.Store()
		db := database(t, st)
		// A deleted run leaves a tombstone: the tenant's deletion removes it too.
		if _, err := svc.DeleteRun(ctx, gone.t, "test", gone.runs[2].ID); err != nil {
			t.Fatal(err)
		}
		var runPKs, evalPKs []int64
		for _, q := range []struct {
			sql string
			out *[]int64
		}{{`SELECT id FROM runs WHERE tenant_id = $1`, &runPKs}, {`SELECT id FROM evaluations WHERE tenant_id = $1`, &evalPKs}} {
			rows, err := db.Query(rebind(st, q.sql), gone.t.ID)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var pk int64
				_ = rows.Scan(&pk)
				*q.out = append(*q.out, pk)
			}
			rows.Close()
		}
		all := tables(t, st, db)
		before := rowsOf(t, st, db, all, gone.t.ID, runPKs, evalPKs)
		for _, table := range []string{"runs", "results", "evaluations", "evaluation_runs", "api_keys", "web_sessions", "agent_policies",
			"insights", "insight_series", "insight_settings", "run_tombstones", "audit_log", "river_job", "labels", "open_spans",
			"tenant_judge_keys", "scorer_versions", "scorer_promotions", "scorer_modules", "result_versions"} {
			if before[table] == 0 {
				t.Errorf("the seed left %s empty for the tenant: the test would prove nothing there", table)
			}
		}
		keptBefore := rowsOf(t, st, db, all, kept.t.ID, nil, nil)

		d, err := svc.DeleteTenant(ctx, "gone", "cli test", nil)
		if err != nil {
			t.Fatal(err)
		}
		if d.Runs != int64(len(runPKs)) || d.Results == 0 {
			t.Errorf("deleted %+v; want %d runs and their results", d, len(runPKs))
		}
		for table, n := range rowsOf(t, st, db, all, gone.t.ID, runPKs, evalPKs) {
			if n != 0 {
				t.Errorf("table %s keeps %d rows of the deleted tenant", table, n)
			}
		}
		// The other tenant keeps everything.
		for table, n := range rowsOf(t, st, db, all, kept.t.ID, nil, nil) {
			if n != keptBefore[table] {
				t.Errorf("table %s: the other tenant has %d rows, had %d", table, n, keptBefore[table])
			}
		}
		if _, _, err := svc.Authenticate(ctx, gone.key); !errors.Is(err, service.ErrUnauthorized) {
			t.Errorf("the deleted tenant's key: %v; want unauthorized", err)
		}
		if _, _, err := svc.Authenticate(ctx, kept.key); err != nil {
			t.Errorf("the other tenant's key: %v", err)
		}
		recs, err := st.TenantDeletions(ctx, 10)
		if err != nil || len(recs) != 1 || recs[0].Subject != "gone" || recs[0].Actor != "cli test" {
			t.Fatalf("deletion record: %+v, %v", recs, err)
		}
		// A tenant of the same name starts empty.
		again, err := svc.CreateTenant(ctx, "gone", store.Policy{})
		if err != nil {
			t.Fatal(err)
		}
		if page, err := svc.Agents(ctx, again, 10, ""); err != nil || len(page.Agents) != 0 {
			t.Fatalf("the new tenant sees %+v, %v", page, err)
		}
	})
}

// rowsOf counts, table by table, the rows of a tenant (and of its runs and evaluations,
// for tables that name those). A table neither with tenant_id nor in noTenantData fails.
func rowsOf(t *testing.T, st *store.Store, db *sql.DB, all map[string][]string, tenantID int64, runPKs, evalPKs []int64) map[string]int {
	t.Helper()
	out := map[string]int{}
	for table, cols := range all {
		switch {
		case table == "tenants":
			out[table] = count(t, db, rebind(st, `SELECT COUNT(*) FROM tenants WHERE id = $1`), tenantID)
		case table == "river_job":
			q := `SELECT COUNT(*) FROM river_job WHERE json_extract(args, '$.tenant') = $1`
			if st.Database() == store.Postgres {
				q = `SELECT COUNT(*) FROM river_job WHERE args->>'tenant' = $1::bigint::text`
			}
			out[table] = count(t, db, rebind(st, q), tenantID)
		case table == "evaluation_runs":
			n := 0
			for _, c := range []struct {
				col string
				pks []int64
			}{{"run_pk", runPKs}, {"evaluation_id", evalPKs}} {
				for _, pk := range c.pks {
					n += count(t, db, rebind(st, `SELECT COUNT(*) FROM evaluation_runs WHERE `+c.col+` = $1`), pk)
				}
			}
			out[table] = n
		case contains(cols, "tenant_id"):
			out[table] = count(t, db, rebind(st, `SELECT COUNT(*) FROM `+table+` WHERE tenant_id = $1`), tenantID)
		case noTenantData[table] != "":
		default:
			t.Errorf("table %s has no tenant_id and is not in noTenantData: make a tenant's deletion remove its rows "+
				"(store.tenantTables) and say here how the test checks it", table)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// rebind turns $N into ? for SQLite through database/sql.
func rebind(st *store.Store, q string) string {
	if st.Database() == store.Postgres {
		return q
	}
	for i := 9; i >= 1; i-- {
		q = strings.ReplaceAll(q, fmt.Sprintf("$%d", i), fmt.Sprintf("?%d", i))
	}
	return q
}

func TestDeleteRunLeavesNothingAndStaysDeleted(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		env := servicetest.New(t, dsn, servicetest.Options{})
		svc := env.Service
		set := seedSet(t)
		s := seedTenant(t, env, "acme", set)
		other := seedTenant(t, env, "other", set) // the same run ids, another tenant
		st := svc.Store()
		db := database(t, st)
		victim := s.runs[len(s.runs)-1] // in both evaluations and in the insight's evidence
		r, err := st.Run(ctx, s.t.ID, victim.ID)
		if err != nil {
			t.Fatal(err)
		}
		if n := count(t, db, rebind(st, `SELECT COUNT(*) FROM results WHERE run_pk = $1`), r.PK); n < 2 {
			t.Fatalf("the run has %d results; the seed should give it two", n)
		}
		d, err := svc.DeleteRun(ctx, s.t, service.KeyActor(s.key), victim.ID)
		if err != nil || d.Runs != 1 || d.Results < 2 {
			t.Fatalf("delete: %+v, %v", d, err)
		}
		all := tables(t, st, db)
		for table, cols := range all {
			// Every column that names a run by its store id.
			for _, c := range cols {
				if c == "run_pk" || (table == "runs" && c == "id") {
					if n := count(t, db, rebind(st, `SELECT COUNT(*) FROM `+table+` WHERE `+c+` = $1`), r.PK); n != 0 {
						t.Errorf("%s.%s: %d rows of the deleted run", table, c, n)
					}
				}
			}
			// Every text of the tenant that quotes its id, but the audit record of the deletion.
			if !contains(cols, "tenant_id") {
				continue
			}
			for _, c := range cols {
				if table == "audit_log" && c == "subject" {
					continue
				}
				q := `SELECT COUNT(*) FROM ` + table + ` WHERE tenant_id = $1 AND CAST(` + c + ` AS TEXT) LIKE $2`
				if n := count(t, db, rebind(st, q), s.t.ID, "%"+victim.ID+"%"); n != 0 {
					t.Errorf("%s.%s: %d rows still name the deleted run %s", table, c, n, victim.ID)
				}
			}
		}
		// The evaluations that covered it count one run less and are still done.
		evs, err := svc.Evaluations(ctx, s.t, seed.AgentEmailTriage, 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			if ev.Status != service.StatusDone {
				t.Errorf("evaluation %s is %s after the deletion; want done", ev.ID, ev.Status)
			}
		}
		// A retried import carrying its id does not bring it back; the other tenant's run of
		// the same id is untouched.
		res, err := svc.ImportRuns(ctx, s.t, jsonl(t, seed.File{Runs: s.runs[len(s.runs)-2:]}), service.ImportOptions{})
		if err != nil || res.Deleted != 1 || res.Runs[1].Status != service.RunDeleted || res.Runs[0].Status != service.RunDuplicate || res.Stored != 0 {
			t.Fatalf("re-import: %+v, %v", res, err)
		}
		if _, err := svc.Run(ctx, s.t, victim.ID, false); !errors.Is(err, service.ErrNotFound) {
			t.Fatalf("the deleted run reads back: %v", err)
		}
		if _, err := svc.Run(ctx, other.t, victim.ID, false); err != nil {
			t.Fatalf("the other tenant's run: %v", err)
		}
		log, err := svc.AuditLog(ctx, s.t, 0, 10)
		if err != nil || len(log) == 0 || log[0].Action != store.AuditDeleteRun || log[0].Subject != victim.ID || log[0].Actor != service.KeyActor(s.key) {
			t.Fatalf("audit log: %+v, %v", log, err)
		}
		if _, err := svc.DeleteRun(ctx, s.t, "test", victim.ID); !errors.Is(err, service.ErrNotFound) {
			t.Fatalf("deleting it again: %v; want not found", err)
		}
	})
}

func TestDeleteAgent(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		env := servicetest.New(t, dsn, servicetest.Options{})
		svc := env.Service
		s := seedTenant(t, env, "acme", seedSet(t))
		d, err := svc.DeleteAgent(ctx, s.t, "cli test", seed.AgentEmailTriage)
		if err != nil || d.Runs != int64(len(s.runs)) || d.Evaluations < 2 || d.Insights < 1 {
			t.Fatalf("delete agent: %+v, %v", d, err)
		}
		page, err := svc.Agents(ctx, s.t, 10, "")
		if err != nil || len(page.Agents) != 1 || page.Agents[0].Name == seed.AgentEmailTriage {
			t.Fatalf("agents after: %+v, %v", page, err)
		}
		if _, err := svc.AgentPolicy(ctx, s.t, seed.AgentEmailTriage); !errors.Is(err, service.ErrNotFound) {
			t.Fatalf("policy after: %v", err)
		}
		if evs, err := svc.Evaluations(ctx, s.t, seed.AgentEmailTriage, 10); err != nil || len(evs) != 0 {
			t.Fatalf("evaluations after: %d, %v", len(evs), err)
		}
		if _, err := svc.DeleteAgent(ctx, s.t, "cli test", seed.AgentEmailTriage); !errors.Is(err, service.ErrNotFound) {
			t.Fatalf("again: %v; want not found", err)
		}
	})
}

func TestRetentionDeletesOldRunsPeriodically(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		env := servicetest.New(t, dsn, servicetest.Options{Jobs: jobs.Options{RetentionInterval: 100 * time.Millisecond}})
		svc := env.Service
		set := seedSet(t)
		// The seed's runs are from 2025: older than 30 days. Two runs of today are kept, and
		// the labelled one (the seed labels its newest run) until its label is deleted.
		s := seedTenant(t, env, "acme", set)
		other := seedTenant(t, env, "other", set) // no retention: keeps everything
		now := time.Now().UTC()
		fresh := []sdk.Run{set.EmailTriage[20], set.EmailTriage[21]}
		for i := range fresh {
			fresh[i].Time = &now
		}
		if res, err := svc.ImportRuns(ctx, s.t, jsonl(t, seed.File{Runs: fresh}), service.ImportOptions{}); err != nil || res.Stored != 2 {
			t.Fatalf("import: %+v, %v", res, err)
		}
		if err := svc.SetTenantPolicy(ctx, "acme", store.Policy{RetentionDays: 30}); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			n, err := svc.Store().CountRuns(ctx, s.t.ID, seed.AgentEmailTriage)
			if err != nil {
				t.Fatal(err)
			}
			if n == 3 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the retention job left %d email-triage runs after 30s; want the 2 of today and the labelled one", n)
			}
			time.Sleep(50 * time.Millisecond)
		}
		for _, r := range fresh {
			if _, err := svc.Run(ctx, s.t, r.ID, false); err != nil {
				t.Errorf("a run of today: %v", err)
			}
		}
		labelled := s.runs[len(s.runs)-1].ID
		if _, err := svc.Run(ctx, s.t, labelled, false); err != nil {
			t.Errorf("the labelled run: %v", err)
		}
		// The agent's open arrival evaluation (the seed's import and today's runs joined it)
		// down to the labelled run and today's two, and the request of the seed's 5 newest
		// down to the labelled run.
		// Today's runs are scored when the arrival evaluation's flush comes (jobs'
		// ArrivalFlushAfter): wait for both to be done.
		var (
			evs []service.EvaluationView
			err error
		)
		for {
			evs, err = svc.Evaluations(ctx, s.t, seed.AgentEmailTriage, 10)
			if err != nil || len(evs) != 2 {
				t.Fatalf("evaluations left: %d, %v; want 2", len(evs), err)
			}
			if evs[0].Status == service.StatusDone && evs[1].Status == service.StatusDone || time.Now().After(deadline) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		for _, ev := range evs {
			if want := map[string]int64{"arrival": 3, "request": 1}[ev.Trigger]; ev.Runs != want || ev.Status != service.StatusDone {
				t.Errorf("%s evaluation %s: %d runs, %s; want %d runs left, done", ev.Trigger, ev.ID, ev.Runs, ev.Status, want)
			}
		}
		if err := svc.DeleteLabel(ctx, s.t, labelled, "prescreen", "ann"); err != nil {
			t.Fatal(err)
		}
		changes := func() int64 {
			series, err := svc.Store().SeriesOf(ctx, s.t.ID, seed.AgentEmailTriage)
			if err != nil || len(series) != 1 {
				t.Fatalf("series: %+v, %v", series, err)
			}
			return series[0].Changes
		}
		before := changes()
		if _, err := svc.Queue().SweepRetention(ctx, time.Now()); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Run(ctx, s.t, labelled, false); !errors.Is(err, service.ErrNotFound) {
			t.Errorf("the run whose label was deleted outlives its retention: %v", err)
		}
		// Its result was in the agent's insight window: the window is assessed again.
		if after := changes(); after <= before {
			t.Errorf("the insight series counted %d changes before the sweep and %d after; want the deletion counted", before, after)
		}
		if n, err := svc.Store().CountRuns(ctx, other.t.ID, seed.AgentEmailTriage); err != nil || n != int64(len(other.runs)) {
			t.Errorf("the tenant without retention has %d runs, %v; want %d", n, err, len(other.runs))
		}
		log, err := svc.AuditLog(ctx, s.t, 0, 10)
		if err != nil || len(log) == 0 || log[0].Action != store.AuditRetention || log[0].Actor != service.ActorRetention {
			t.Fatalf("audit log: %+v, %v", log, err)
		}
	})
}

func TestTombstonesExpire(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		env := servicetest.New(t, dsn, servicetest.Options{NoWorkers: true})
		svc := env.Service
		tn, err := svc.CreateTenant(ctx, "acme", store.Policy{})
		if err != nil {
			t.Fatal(err)
		}
		run := []byte(`{"id": "r1", "agent": "a", "input": "q", "output": "a"}`)
		if _, err := svc.ImportRuns(ctx, tn, run, service.ImportOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.DeleteRun(ctx, tn, "test", "r1"); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name string
			at   time.Time
			want string
		}{
			{"within the TTL the id stays deleted", time.Now().Add(store.TombstoneTTL - time.Hour), service.RunDeleted},
			{"after the TTL it may be stored again", time.Now().Add(store.TombstoneTTL + time.Hour), service.RunStored},
		} {
			if _, err := svc.Queue().SweepRetention(ctx, c.at); err != nil {
				t.Fatal(err)
			}
			res, err := svc.ImportRuns(ctx, tn, run, service.ImportOptions{})
			if err != nil || res.Runs[0].Status != c.want {
				t.Fatalf("%s: %+v, %v", c.name, res, err)
			}
		}
	})
}

// A retried import racing the deletion of the same run does not bring it back: on
// PostgreSQL the import's insert waits on the unique index for the deletion, then inserts
// once it commits, and finds its tombstone in the same transaction.
func TestDeletionRacingImportStaysDeleted(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		env := servicetest.New(t, dsn, servicetest.Options{NoWorkers: true})
		svc := env.Service
		tn, err := svc.CreateTenant(ctx, "acme", store.Policy{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 40 {
			run := []byte(fmt.Sprintf(`{"id": "race-%d", "agent": "a", "input": "q", "output": "a"}`, i))
			if _, err := svc.ImportRuns(ctx, tn, run, service.ImportOptions{}); err != nil {
				t.Fatal(err)
			}
			start := make(chan struct{})
			errs := make(chan error, 2)
			go func() {
				<-start
				_, err := svc.DeleteRun(ctx, tn, "test", fmt.Sprintf("race-%d", i))
				errs <- err
			}()
			go func() {
				<-start
				_, err := svc.ImportRuns(ctx, tn, run, service.ImportOptions{})
				errs <- err
			}()
			close(start)
			for range 2 {
				if err := <-errs; err != nil {
					t.Fatal(err)
				}
			}
			if _, err := svc.Run(ctx, tn, fmt.Sprintf("race-%d", i), false); !errors.Is(err, service.ErrNotFound) {
				t.Fatalf("round %d: the deleted run is back (%v)", i, err)
			}
		}
	})
}

// snapshotWriter is an export's destination that, when the export writes its first run,
// changes the tenant's data: a label added and a run deleted (with its audit record).
type snapshotWriter struct {
	bytes.Buffer
	changed bool
	change  func() error
	err     error
}

func (w *snapshotWriter) Write(p []byte) (int, error) {
	if !w.changed && bytes.Contains(p, []byte(`"kind":"run"`)) {
		w.changed = true
		w.err = w.change()
	}
	return w.Buffer.Write(p)
}

// A tenant's export carries its published scorers: every version (a deleted one too), the
// promotions, and each module's bytes, so a tenant that leaves takes its own scorers.
func TestExportCarriesPublishedScorers(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		env := servicetest.New(t, dsn, servicetest.Options{})
		svc := env.Service
		tn, err := svc.CreateTenant(ctx, "acme", store.Policy{})
		if err != nil {
			t.Fatal(err)
		}
		module := okModule(t)
		for _, req := range []service.PublishRequest{{Name: "mine", Base: "prescreen"}, {Name: "module", Module: module},
			{Name: "mine", Base: "prescreen", Config: json.RawMessage(`{"cutoff_min_words":3}`)}} {
			if _, err := svc.Publish(ctx, tn, req); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := svc.Promote(ctx, tn, "mine", 2, service.PromoteOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := svc.DeleteScorerVersion(ctx, tn, "mine", 1); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := svc.Export(ctx, tn, "test", &buf); err != nil {
			t.Fatal(err)
		}
		var (
			versions   []store.ExportedScorerVersion
			promotions []store.ExportedPromotion
			modules    []store.ExportedModule
			end        map[string]int
		)
		for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
			var l struct {
				Kind string          `json:"kind"`
				Data json.RawMessage `json:"data"`
			}
			if err := json.Unmarshal([]byte(line), &l); err != nil {
				t.Fatalf("line %q: %v", line, err)
			}
			var err error
			switch l.Kind {
			case store.ExportScorerVersion:
				versions = append(versions, store.ExportedScorerVersion{})
				err = json.Unmarshal(l.Data, &versions[len(versions)-1])
			case store.ExportScorerPromotion:
				promotions = append(promotions, store.ExportedPromotion{})
				err = json.Unmarshal(l.Data, &promotions[len(promotions)-1])
			case store.ExportScorerModule:
				modules = append(modules, store.ExportedModule{})
				err = json.Unmarshal(l.Data, &modules[len(modules)-1])
			case service.ExportEnd:
				err = json.Unmarshal(l.Data, &end)
			}
			if err != nil {
				t.Fatalf("%s line: %v", l.Kind, err)
			}
		}
		if len(versions) != 3 || versions[0].Name != "mine" || versions[0].Version != 1 || versions[0].DeletedAt == nil ||
			versions[1].Version != 2 || string(versions[1].Config) != `{"cutoff_min_words":3}` || versions[1].DeletedAt != nil ||
			versions[2].Name != "module" || versions[2].Kind != store.KindWASM {
			t.Fatalf("exported versions %+v", versions)
		}
		// The first version of each name was promoted when published; "mine" then moved to 2.
		if len(promotions) != 3 || promotions[0].Name != "mine" || promotions[0].Version != 1 || promotions[1].Version != 2 || promotions[2].Name != "module" {
			t.Fatalf("exported promotions %+v", promotions)
		}
		if len(modules) != 1 || modules[0].Digest != versions[2].Digest || !bytes.Equal(modules[0].Module, module) || modules[0].Size != int64(len(module)) {
			t.Fatalf("exported modules: %d, digest %v (version's %s)", len(modules), modules, versions[2].Digest)
		}
		if end[store.ExportScorerVersion] != 3 || end[store.ExportScorerModule] != 1 {
			t.Fatalf("end line %v", end)
		}
	})
}

// An export is one snapshot: what the tenant writes while it is read (a label, a run
// deleted and the deletion's audit record) is neither in it nor held up by it.
func TestExportIsOneSnapshot(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		env := servicetest.New(t, dsn, servicetest.Options{})
		svc := env.Service
		s := seedTenant(t, env, "acme", seedSet(t))
		pass := true
		gone := s.runs[0].ID
		w := &snapshotWriter{change: func() error {
			if _, _, err := svc.PutLabel(ctx, s.t, s.runs[1].ID, "prescreen", service.LabelInput{Labeller: "late", LabelValue: service.LabelValue{Passed: &pass}}); err != nil {
				return err
			}
			_, err := svc.DeleteRun(ctx, s.t, "test", gone)
			return err
		}}
		if err := svc.Export(ctx, s.t, "test", w); err != nil {
			t.Fatal(err)
		}
		if w.err != nil {
			t.Fatalf("writing during the export: %v", w.err)
		}
		var sawGone bool
		for _, line := range strings.Split(strings.TrimSpace(w.String()), "\n") {
			var l struct {
				Kind string          `json:"kind"`
				Data json.RawMessage `json:"data"`
			}
			if err := json.Unmarshal([]byte(line), &l); err != nil {
				t.Fatalf("line %q: %v", line, err)
			}
			switch {
			case l.Kind == store.ExportLabel && strings.Contains(string(l.Data), `"late"`):
				t.Errorf("the export holds the label added while it was read: %s", l.Data)
			case l.Kind == store.ExportAudit && strings.Contains(string(l.Data), store.AuditDeleteRun):
				t.Errorf("the export holds the deletion made while it was read: %s", l.Data)
			case l.Kind == store.ExportRun && strings.Contains(string(l.Data), `"id":"`+gone+`"`):
				sawGone = true
			}
		}
		if !sawGone {
			t.Errorf("the run deleted while the export was read is missing from it; the export began before the deletion")
		}
		if _, err := svc.Run(ctx, s.t, gone, false); !errors.Is(err, service.ErrNotFound) {
			t.Errorf("the run deleted during the export: %v; want deleted", err)
		}
	})
}

// okModule is the WASM module of host/wasm/testdata/ok.wat, built with wat2wasm.
func okModule(t *testing.T) []byte {
	t.Helper()
	okWasm := filepath.Join(t.TempDir(), "ok.wasm")
	if out, err := exec.Command("wat2wasm", filepath.Join("..", "..", "host", "wasm", "testdata", "ok.wat"), "-o", okWasm).CombinedOutput(); err != nil {
		t.Fatalf("wat2wasm (apt-get install wabt): %v\n%s", err, out)
	}
	module, err := os.ReadFile(okWasm)
	if err != nil {
		t.Fatal(err)
	}
	return module
}
