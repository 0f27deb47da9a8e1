package store

import (
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The store branches on its database in one place, its dialects: outside dialect*.go no
// file compares a database's name, asks whether a handle of one database is set, looks at
// which querier it holds, or imports what speaks to one database.
func TestOnlyDialectsKnowTheirDatabase(t *testing.T) {
	branch := regexp.MustCompile(`(==|!=) *(SQLite|Postgres)\b|\b(SQLite|Postgres) *(==|!=)|Database\(\) *(==|!=)|` +
		`\.(pool|sqlDB|readDB|pgxTx|sqlTx)\b *(==|!=) *nil|\b(Pool|SQLDB|SQLTx|PgxTx)\(\) *(==|!=) *nil|` +
		`\.\((\*?(sqliteDialect|postgresDialect)|pgxQuerier|sqlQuerier|sqliteTx|postgresTx)\)`)
	// What speaks to one database, and the file outside the dialects that may import it:
	// store.go hands River its handles (Store.Pool, Tx.PgxTx) and goose its dialect.
	onlyIn := map[string]string{
		"modernc.org/sqlite":              "",
		"github.com/jackc/pgx/v5/pgconn":  "",
		"github.com/jackc/pgx/v5/stdlib":  "",
		"github.com/jackc/pgx/v5":         "store.go",
		"github.com/jackc/pgx/v5/pgxpool": "store.go",
		"github.com/pressly/goose/v3":     "store.go",
	}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || strings.HasPrefix(name, "dialect") {
			continue
		}
		checked++
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(src), "\n") {
			if code, _, _ := strings.Cut(line, "//"); branch.MatchString(code) {
				t.Errorf("%s:%d branches on the database outside its dialect: %s", name, i+1, strings.TrimSpace(line))
			}
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if file, listed := onlyIn[path]; listed && file != name {
				t.Errorf("%s imports %s, which belongs to a dialect", name, path)
			}
		}
	}
	if checked < 20 {
		t.Fatalf("checked %d files; the store has more: is the test running in its folder?", checked)
	}
}
