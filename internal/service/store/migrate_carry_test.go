package store

import (
	"context"
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/pressly/goose/v3"
)

// TestMigration00004CarriesResults: results stored before published scorers existed keep
// their scorer, version and judge model, and get an empty digest (the host's scorers have
// none).
func TestMigration00004CarriesResults(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	d, err := openSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	sub, err := fs.Sub(migrations, "migrations/sqlite")
	if err != nil {
		t.Fatal(err)
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, d.db, sub, goose.WithTableName("scorekit_migrations"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(ctx, 3); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO tenants (id, name, created_at) VALUES (1, 'acme', 0)`,
		`INSERT INTO runs (id, tenant_id, run_id, agent, run_time, received_at, body) VALUES (1, 1, 'r1', 'bot', 0, 0, '{}')`,
		`INSERT INTO evaluations (id, public_id, tenant_id, agent, trigger, spec, runs, expected, created_at) VALUES (1, 'ev_x', 1, 'bot', 'request', '{"scorers":[]}', 1, 1, 0)`,
		`INSERT INTO results (tenant_id, evaluation_id, run_pk, scorer, scorer_version, judge_model, status, score, passed, result, created_at)
			VALUES (1, 1, 1, 'relevancy', '1.2.0', 'gpt-4o-mini', 'scored', 0.9, 1, '{"status":"scored","score":0.9}', 0)`,
	} {
		if _, err := d.db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	d.close()

	st, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if v, err := st.Version(ctx); err != nil || v < 4 {
		t.Fatalf("version %d, %v; want 4 or later", v, err)
	}
	rs, err := st.RunResults(ctx, 1, 1)
	if err != nil || len(rs) != 1 {
		t.Fatalf("results %v, %v", rs, err)
	}
	if r := rs[0]; r.Scorer != "relevancy" || r.ScorerVersion != "1.2.0" || r.JudgeModel != "gpt-4o-mini" || r.ScorerDigest != "" || *r.Score != 0.9 {
		t.Fatalf("carried result %+v", r)
	}
}
