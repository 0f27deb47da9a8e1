package store

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/pressly/goose/v3"

	"github.com/scorekit/scorekit/internal/pgtest"
)

// The two trees of migrations build the same schema: migrated one file at a time, up and
// then down, a SQLite file and a PostgreSQL database hold after each file the same
// tables, columns (nullability, default, whether the database assigns it), primary keys,
// unique constraints, foreign keys and indexes (columns, order, uniqueness, predicate),
// read from each database's catalogue, with the column types each maps (schemaType) and
// the differences below (knownDifferences) set aside. A tree changed on one side only
// fails it, as the misaligned copies show.
func TestMigrationTreesAgree(t *testing.T) {
	lite, err := Migrations(SQLite)
	if err != nil {
		t.Fatal(err)
	}
	pg, err := Migrations(Postgres)
	if err != nil {
		t.Fatal(err)
	}
	met := map[string]bool{}
	if diffs := compareTrees(t, lite, pg, true, met); len(diffs) > 0 {
		t.Errorf("the migration trees differ:\n%s", strings.Join(diffs, "\n"))
	}
	for f := range knownDifferences {
		if !met[f] {
			t.Errorf("knownDifferences holds %q, which the trees no longer differ by: remove it", f)
		}
	}

	// Each copy changes one file of one tree; the comparison names the difference.
	for _, c := range []struct {
		name, database, file, old, new, want string
	}{
		{"a type outside the map", Postgres, "00016_otlp_logs_traces.sql",
			"done       BOOLEAN NOT NULL", "done       TEXT    NOT NULL",
			"after 00016_otlp_logs_traces.sql: only on postgres: column open_traces.done TEXT NOT NULL"},
		{"a column left out", SQLite, "00014_labeller_keys.sql",
			"ALTER TABLE api_keys ADD COLUMN labeller TEXT NOT NULL DEFAULT '';", "SELECT 1;",
			"after 00014_labeller_keys.sql: only on postgres: column api_keys.labeller TEXT NOT NULL DEFAULT ''"},
		{"another default", Postgres, "00005_scopes_judge_keys.sql",
			"DEFAULT 'admin'", "DEFAULT 'read'",
			"after 00005_scopes_judge_keys.sql: only on postgres: column api_keys.scope TEXT NOT NULL DEFAULT 'read'"},
		{"a nullable column", SQLite, "00007_open_spans.sql",
			"received_at    INTEGER NOT NULL", "received_at    INTEGER",
			"after 00007_open_spans.sql: only on sqlite: column open_spans.received_at INTEGER"},
		{"an index's predicate", SQLite, "00017_otlp_waiting_index.sql",
			"WHERE LENGTH(span) > 0", "WHERE LENGTH(span) >= 0",
			"after 00017_otlp_waiting_index.sql: only on sqlite: index open_spans_waiting ON open_spans (tenant_id, expires_at) WHERE length(span) >= 0"},
		{"an index's order", Postgres, "00001_init.sql",
			"run_time DESC, id DESC", "run_time, id",
			"after 00001_init.sql: only on postgres: index runs_agent_time ON runs (tenant_id, agent, run_time, id)"},
		{"an index left out", Postgres, "00008_retention.sql",
			"CREATE INDEX web_sessions_key ON web_sessions (key_id);", "",
			"after 00008_retention.sql: only on sqlite: index web_sessions_key ON web_sessions (key_id)"},
		{"a foreign key's action", SQLite, "00006_labels.sql",
			"REFERENCES runs (id) ON DELETE CASCADE", "REFERENCES runs (id)",
			"after 00006_labels.sql: only on sqlite: foreign key labels (run_pk) REFERENCES runs (id) ON DELETE NO ACTION"},
		{"a unique constraint", Postgres, "00013_result_versions.sql",
			"PRIMARY KEY (tenant_id, scorer, scorer_version)", "UNIQUE (tenant_id, scorer, scorer_version)",
			"after 00013_result_versions.sql: only on sqlite: primary key result_versions (tenant_id, scorer, scorer_version)"},
		{"a down step", SQLite, "00010_promotion_gate.sql",
			"ALTER TABLE insight_settings DROP COLUMN kappas;", "",
			"down from 00010_promotion_gate.sql: only on sqlite: column insight_settings.kappas TEXT NOT NULL DEFAULT '[]'"},
	} {
		t.Run("misaligned/"+c.name, func(t *testing.T) {
			trees := map[string]fs.FS{SQLite: lite, Postgres: pg}
			trees[c.database] = mutated(t, trees[c.database], c.file, c.old, c.new)
			diffs := compareTrees(t, trees[SQLite], trees[Postgres], strings.HasPrefix(c.want, "down"), map[string]bool{})
			if !slices.Contains(diffs, c.want) {
				t.Errorf("the comparison says:\n%s\nwant among it:\n%s", strings.Join(diffs, "\n"), c.want)
			}
		})
	}
}

// knownDifferences are what the two trees say alike and the databases still hold apart,
// by the fact each side reports; compareTrees sets them aside. Neither can be aligned by
// a migration without rebuilding the SQLite table, and the store's writes never meet them.
var knownDifferences = map[string]string{
	// SQLite makes every INTEGER PRIMARY KEY an alias of the rowid, which it assigns when
	// an insert leaves the column out; PostgreSQL's BIGINT PRIMARY KEY is a plain key.
	// The store always writes the tenant's id.
	"column insight_settings.tenant_id INTEGER NOT NULL assigned": "column insight_settings.tenant_id INTEGER NOT NULL",
	// On SQLite a PRIMARY KEY column that is not an INTEGER of a table with a rowid may
	// hold NULL; on PostgreSQL a primary key is NOT NULL. The store always writes the hash.
	"column web_sessions.hash BLOB": "column web_sessions.hash BLOB NOT NULL",
}

// compareTrees migrates a fresh SQLite file by lite and a fresh PostgreSQL database by pg
// one file at a time (and back down one at a time when down is set) and returns the
// differences between their schemas at the first step where they differ. It marks in met
// the SQLite facts of knownDifferences it set aside.
//
// It compares schemas, not what the migrations do to rows: 00011 fills a column with
// max() on SQLite and GREATEST() on PostgreSQL, and PostgreSQL's 00012 converts two
// columns from JSONB to TEXT (TEXT on SQLite from the start) only in stores small enough
// to rewrite (the Migration tests carry rows across those). Nor does a catalogue say
// that SQLite's result_versions is a table WITHOUT ROWID, a layout PostgreSQL has no
// word for.
func compareTrees(t *testing.T, lite, pg fs.FS, down bool, met map[string]bool) []string {
	t.Helper()
	ctx := context.Background()
	open := func(dsn string, tree fs.FS) (dialect, *goose.Provider) {
		d, err := openDialect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(d.close)
		db, gd, release := d.migrator()
		t.Cleanup(release)
		p, err := goose.NewProvider(gd, db, tree, goose.WithTableName("scorekit_migrations"))
		if err != nil {
			t.Fatal(err)
		}
		return d, p
	}
	liteStore, liteP := open(filepath.Join(t.TempDir(), "tree.db"), lite)
	pgStore, pgP := open(pgtest.Shared(t).Database(t), pg)
	var files [2][]string
	for i, p := range []*goose.Provider{liteP, pgP} {
		for _, s := range p.ListSources() {
			files[i] = append(files[i], filepath.Base(s.Path))
		}
	}
	if !slices.Equal(files[0], files[1]) {
		return []string{fmt.Sprintf("the trees hold other files: %s on sqlite, %s on postgres", files[0], files[1])}
	}
	step := func(what string, move func(*goose.Provider) error) []string {
		for _, p := range []*goose.Provider{liteP, pgP} {
			if err := move(p); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
		}
		a, b := schemaFacts(t, liteStore), schemaFacts(t, pgStore)
		var diffs []string
		for _, f := range a {
			if slices.Contains(b, f) {
				continue
			}
			if slices.Contains(b, knownDifferences[f]) {
				met[f] = true
				continue
			}
			diffs = append(diffs, what+": only on sqlite: "+f)
		}
		for _, f := range b {
			if !slices.Contains(a, f) && !slices.Contains(a, knownDifference(f)) {
				diffs = append(diffs, what+": only on postgres: "+f)
			}
		}
		return diffs
	}
	for _, f := range files[0] {
		if diffs := step("after "+f, func(p *goose.Provider) error { _, err := p.UpByOne(ctx); return err }); len(diffs) > 0 {
			return diffs
		}
	}
	if !down {
		return nil
	}
	for _, f := range slices.Backward(files[0]) {
		if diffs := step("down from "+f, func(p *goose.Provider) error { _, err := p.Down(ctx); return err }); len(diffs) > 0 {
			return diffs
		}
	}
	return nil
}

// knownDifference is the fact on SQLite that knownDifferences pairs with f on PostgreSQL.
func knownDifference(f string) string {
	for lite, pg := range knownDifferences {
		if pg == f {
			return lite
		}
	}
	return ""
}

// mutated is tree with old replaced by new in file, which must hold old once.
func mutated(t *testing.T, tree fs.FS, file, old, new string) fs.FS {
	t.Helper()
	out := fstest.MapFS{}
	err := fs.WalkDir(tree, ".", func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := fs.ReadFile(tree, path)
		if err != nil {
			return err
		}
		if path == file {
			if strings.Count(string(b), old) != 1 {
				return fmt.Errorf("%s holds %q %d times; want once", file, old, strings.Count(string(b), old))
			}
			b = []byte(strings.Replace(string(b), old, new, 1))
		}
		out[path] = &fstest.MapFile{Data: b}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// schemaFacts is the store's schema as its database's catalogue tells it (cataloguer),
// one fact a line, sorted: the tables, their columns with their types as schemaType maps
// them, their primary keys, unique constraints, foreign keys and indexes. goose's own
// table is left out.
func schemaFacts(t *testing.T, d dialect) []string {
	t.Helper()
	facts, err := d.(cataloguer).schema(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(facts)
	return facts
}

// cataloguer is a dialect's reading of its catalogue (schemaFacts).
type cataloguer interface {
	schema(ctx context.Context) ([]string, error)
}

// schemaType is a column's type as SQLite declares it, from either database's name of it:
// the types the two trees map onto each other. A type outside the map is kept as it is,
// so that it differs from the other side's.
func schemaType(typ string) string {
	switch t := strings.ToUpper(typ); t {
	case "BIGINT", "INTEGER", "SMALLINT", "BOOLEAN":
		return "INTEGER"
	case "JSONB":
		return "TEXT"
	case "BYTEA":
		return "BLOB"
	case "DOUBLE PRECISION":
		return "REAL"
	default:
		return t
	}
}

// columnFact is a column as a fact: its type as schemaType maps it, NOT NULL, its
// default (PostgreSQL's casts dropped, its booleans as SQLite's 0 and 1), and "assigned"
// when the database assigns it when an insert leaves it out.
func columnFact(table, name, typ string, notNull bool, def *string, assigned bool) string {
	f := "column " + table + "." + name + " " + schemaType(typ)
	if notNull {
		f += " NOT NULL"
	}
	if def != nil {
		v := pgCast.ReplaceAllString(*def, "")
		switch v {
		case "false":
			v = "0"
		case "true":
			v = "1"
		}
		f += " DEFAULT " + v
	}
	if assigned {
		f += " assigned"
	}
	return f
}

// pgCast is the cast PostgreSQL prints after a default ('{}'::jsonb).
var pgCast = regexp.MustCompile(`::[a-z ]+(\[\])?$`)

// indexFact is an index as a fact from its CREATE INDEX text (SQLite keeps the text it
// was given, PostgreSQL prints its own): its name, table, columns with their order, and
// predicate, written alike.
func indexFact(name, table string, unique bool, def string) string {
	f := "index "
	if unique {
		f = "unique index "
	}
	on := strings.Index(def, "(")
	depth, end := 0, -1
	for i := on; i >= 0 && i < len(def); i++ {
		switch def[i] {
		case '(':
			depth++
		case ')':
			depth--
		}
		if depth == 0 {
			end = i
			break
		}
	}
	if end < 0 {
		return f + name + " ON " + table + " " + def
	}
	// PostgreSQL quotes a column named by a keyword ("position").
	cols := strings.ReplaceAll(def[on+1:end], `"`, "")
	f += name + " ON " + table + " (" + strings.ToLower(strings.Join(strings.Fields(cols), " ")) + ")"
	if rest := strings.TrimSpace(def[end+1:]); rest != "" {
		where := strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(rest, "WHERE"), "where"))
		for strings.HasPrefix(where, "(") && strings.HasSuffix(where, ")") {
			where = strings.TrimSpace(where[1 : len(where)-1])
		}
		f += " WHERE " + strings.ToLower(strings.Join(strings.Fields(where), " "))
	}
	return f
}

// schema reads SQLite's catalogue: sqlite_schema and the table_info, index_list,
// index_info and foreign_key_list pragmas.
func (d *sqliteDialect) schema(ctx context.Context) ([]string, error) {
	var facts []string
	tables, err := d.strings(ctx, `SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\' AND name != 'scorekit_migrations'`)
	if err != nil {
		return nil, err
	}
	for _, table := range tables {
		facts = append(facts, "table "+table)
		rs, err := d.db.QueryContext(ctx, `SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info(?) ORDER BY cid`, table)
		if err != nil {
			return nil, err
		}
		var pk []string
		type col struct {
			name, typ string
			notNull   bool
			def       *string
			pk        int
		}
		var cols []col
		for rs.Next() {
			var c col
			if err := rs.Scan(&c.name, &c.typ, &c.notNull, &c.def, &c.pk); err != nil {
				rs.Close()
				return nil, err
			}
			cols = append(cols, c)
		}
		rs.Close()
		if err := rs.Err(); err != nil {
			return nil, err
		}
		slices.SortFunc(cols, func(a, b col) int { return a.pk - b.pk })
		for _, c := range cols {
			if c.pk > 0 {
				pk = append(pk, c.name)
			}
		}
		for _, c := range cols {
			// The one INTEGER PRIMARY KEY of a table is its rowid: never NULL, assigned
			// when an insert leaves it out.
			rowid := len(pk) == 1 && c.pk == 1 && strings.EqualFold(c.typ, "INTEGER")
			facts = append(facts, columnFact(table, c.name, c.typ, c.notNull || rowid, c.def, rowid))
		}
		if len(pk) > 0 {
			facts = append(facts, "primary key "+table+" ("+strings.Join(pk, ", ")+")")
		}
		rs, err = d.db.QueryContext(ctx, `SELECT l.name, l."unique", l.origin, COALESCE(s.sql, '') FROM pragma_index_list(?) AS l
			LEFT JOIN sqlite_schema AS s ON s.type = 'index' AND s.name = l.name`, table)
		if err != nil {
			return nil, err
		}
		type index struct {
			name, origin, sql string
			unique            bool
		}
		var indexes []index
		for rs.Next() {
			var i index
			if err := rs.Scan(&i.name, &i.unique, &i.origin, &i.sql); err != nil {
				rs.Close()
				return nil, err
			}
			indexes = append(indexes, i)
		}
		rs.Close()
		if err := rs.Err(); err != nil {
			return nil, err
		}
		for _, i := range indexes {
			switch i.origin {
			case "pk":
			case "u":
				cols, err := d.strings(ctx, `SELECT name FROM pragma_index_info(?) ORDER BY seqno`, i.name)
				if err != nil {
					return nil, err
				}
				facts = append(facts, "unique "+table+" ("+strings.Join(cols, ", ")+")")
			default:
				facts = append(facts, indexFact(i.name, table, i.unique, i.sql))
			}
		}
		rs, err = d.db.QueryContext(ctx, `SELECT id, "from", "table", "to", on_delete FROM pragma_foreign_key_list(?) ORDER BY id, seq`, table)
		if err != nil {
			return nil, err
		}
		fks := map[int][3][]string{}
		var ids []int
		actions := map[int]string{}
		for rs.Next() {
			var (
				id                 int
				from, to, onDelete string
				ref                string
			)
			if err := rs.Scan(&id, &from, &ref, &to, &onDelete); err != nil {
				rs.Close()
				return nil, err
			}
			fk, seen := fks[id]
			if !seen {
				ids = append(ids, id)
			}
			fk[0], fk[1], fk[2] = append(fk[0], from), []string{ref}, append(fk[2], to)
			fks[id], actions[id] = fk, onDelete
		}
		rs.Close()
		if err := rs.Err(); err != nil {
			return nil, err
		}
		for _, id := range ids {
			fk := fks[id]
			facts = append(facts, fmt.Sprintf("foreign key %s (%s) REFERENCES %s (%s) ON DELETE %s",
				table, strings.Join(fk[0], ", "), fk[1][0], strings.Join(fk[2], ", "), actions[id]))
		}
	}
	return facts, nil
}

// strings runs q, whose rows are one text each.
func (d *sqliteDialect) strings(ctx context.Context, q string, args ...any) ([]string, error) {
	rs, err := d.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out []string
	for rs.Next() {
		var s string
		if err := rs.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rs.Err()
}

// pgActions are PostgreSQL's codes of a foreign key's action on delete, by SQLite's names.
var pgActions = map[string]string{"a": "NO ACTION", "r": "RESTRICT", "c": "CASCADE", "n": "SET NULL", "d": "SET DEFAULT"}

// schema reads PostgreSQL's catalogue of the current schema: information_schema.columns,
// pg_constraint and pg_index.
func (d *postgresDialect) schema(ctx context.Context) ([]string, error) {
	var facts []string
	rs, err := d.p.Query(ctx, `SELECT c.table_name, c.column_name, c.data_type, c.is_nullable = 'NO', c.column_default, c.is_identity = 'YES'
		FROM information_schema.columns c JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
		WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE' AND c.table_name != 'scorekit_migrations'`)
	if err != nil {
		return nil, err
	}
	tables := map[string]bool{}
	for rs.Next() {
		var (
			table, name, typ string
			notNull, ident   bool
			def              *string
		)
		if err := rs.Scan(&table, &name, &typ, &notNull, &def, &ident); err != nil {
			rs.Close()
			return nil, err
		}
		if !tables[table] {
			tables[table] = true
			facts = append(facts, "table "+table)
		}
		facts = append(facts, columnFact(table, name, typ, notNull, def, ident))
	}
	rs.Close()
	if err := rs.Err(); err != nil {
		return nil, err
	}
	// Each constraint's columns in their order, and the referenced table's.
	rs, err = d.p.Query(ctx, `SELECT c.conrelid::regclass::text, c.contype,
			ARRAY(SELECT a.attname::text FROM unnest(c.conkey) WITH ORDINALITY AS k(n, i)
				JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n ORDER BY k.i),
			COALESCE(c.confrelid::regclass::text, ''),
			ARRAY(SELECT a.attname::text FROM unnest(c.confkey) WITH ORDINALITY AS k(n, i)
				JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n ORDER BY k.i),
			c.confdeltype
		FROM pg_constraint c JOIN pg_class r ON r.oid = c.conrelid
		WHERE r.relnamespace = current_schema()::regnamespace AND c.contype IN ('p', 'u', 'f') AND r.relname != 'scorekit_migrations'`)
	if err != nil {
		return nil, err
	}
	for rs.Next() {
		var (
			table, kind, ref, action string
			cols, refCols            []string
		)
		if err := rs.Scan(&table, &kind, &cols, &ref, &refCols, &action); err != nil {
			rs.Close()
			return nil, err
		}
		switch kind {
		case "p":
			facts = append(facts, "primary key "+table+" ("+strings.Join(cols, ", ")+")")
		case "u":
			facts = append(facts, "unique "+table+" ("+strings.Join(cols, ", ")+")")
		case "f":
			facts = append(facts, fmt.Sprintf("foreign key %s (%s) REFERENCES %s (%s) ON DELETE %s",
				table, strings.Join(cols, ", "), ref, strings.Join(refCols, ", "), pgActions[action]))
		}
	}
	rs.Close()
	if err := rs.Err(); err != nil {
		return nil, err
	}
	// The indexes that no constraint made.
	rs, err = d.p.Query(ctx, `SELECT i.relname::text, r.relname::text, x.indisunique, pg_get_indexdef(x.indexrelid)
		FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class r ON r.oid = x.indrelid
		WHERE r.relnamespace = current_schema()::regnamespace AND r.relname != 'scorekit_migrations'
			AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)`)
	if err != nil {
		return nil, err
	}
	for rs.Next() {
		var (
			name, table, def string
			unique           bool
		)
		if err := rs.Scan(&name, &table, &unique, &def); err != nil {
			rs.Close()
			return nil, err
		}
		// CREATE INDEX name ON schema.table USING btree (columns) WHERE (predicate)
		if _, after, ok := strings.Cut(def, " USING btree "); ok {
			def = after
		}
		facts = append(facts, indexFact(name, table, unique, def))
	}
	rs.Close()
	return facts, rs.Err()
}
