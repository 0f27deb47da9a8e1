package main

import (
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	loadOnce sync.Once
	loaded   *Surface
	loadErr  error
)

// surface type-checks the module once for all the tests.
func surface(t *testing.T) *Surface {
	t.Helper()
	loadOnce.Do(func() { loaded, loadErr = Load(".") })
	if loadErr != nil {
		t.Fatal(loadErr)
	}
	return loaded
}

// TestListingIsCurrent fails when API.txt is not what the tree exports.
func TestListingIsCurrent(t *testing.T) {
	s := surface(t)
	path := filepath.Join("..", "..", "..", "API.txt")
	committed, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v (fix: go generate ./internal/cmd/apisurface)", path, err)
	}
	if got := s.Listing(); got != string(committed) {
		t.Errorf("API.txt is stale: the public surface changed (fix: go generate ./internal/cmd/apisurface, then review the diff of API.txt and commit it)\n%s",
			lineDiff(string(committed), got))
	}
}

// TestNoStoreInPublicSurface holds the public packages to issue 34's target: no *sql.DB,
// pool, transaction or type of the service's store in anything a user of them can reach.
func TestNoStoreInPublicSurface(t *testing.T) {
	s := surface(t)
	for _, r := range s.Refs() {
		if why := forbidden(r.Type, s.Module); why != "" {
			t.Errorf("%s reaches %s.%s, %s; keep it behind the service's facade (internal/service) or an interface of the public package",
				r.Where, r.Type.Pkg().Path(), r.Type.Name(), why)
		}
	}
}

// TestForbiddenIsFound checks that the walk finds each kind of forbidden type, named
// directly, inside a composite type, in a field, and behind an internal type the surface
// hands out, so TestNoStoreInPublicSurface can fail.
func TestForbiddenIsFound(t *testing.T) {
	const module = "example.com/m"
	sqlPkg := types.NewPackage("database/sql", "sql")
	pgxpool := types.NewPackage("github.com/jackc/pgx/v5/pgxpool", "pgxpool")
	pgx := types.NewPackage("github.com/jackc/pgx/v5", "pgx")
	store := types.NewPackage(module+"/internal/service/store", "store")
	impl := types.NewPackage(module+"/internal/service", "service")
	typeIn := func(p *types.Package, name string) *types.Named {
		return types.NewNamed(types.NewTypeName(token.NoPos, p, name, nil), types.NewStruct(nil, nil), nil)
	}
	cases := []struct {
		name string
		t    func(pub *types.Package) types.Type
		want string
	}{
		{"sql.DB", func(*types.Package) types.Type { return types.NewPointer(typeIn(sqlPkg, "DB")) }, "database/sql.DB"},
		{"sql.Tx in a slice", func(*types.Package) types.Type { return types.NewSlice(types.NewPointer(typeIn(sqlPkg, "Tx"))) }, "database/sql.Tx"},
		{"pgxpool.Pool in a map", func(*types.Package) types.Type {
			return types.NewMap(types.Typ[types.String], types.NewPointer(typeIn(pgxpool, "Pool")))
		}, "pgxpool.Pool"},
		{"pgx.Tx in a func", func(pub *types.Package) types.Type {
			tx := typeIn(pgx, "Tx")
			return types.NewSignatureType(nil, nil, nil, types.NewTuple(types.NewVar(token.NoPos, pub, "tx", tx)), nil, false)
		}, "pgx/v5.Tx"},
		{"store type in a field", func(pub *types.Package) types.Type {
			f := types.NewField(token.NoPos, pub, "Store", types.NewPointer(typeIn(store, "Store")), false)
			return types.NewStruct([]*types.Var{f}, nil)
		}, "internal/service/store.Store"},
		{"sql.DB behind an internal type", func(pub *types.Package) types.Type {
			f := types.NewField(token.NoPos, impl, "DB", types.NewPointer(typeIn(sqlPkg, "DB")), false)
			svc := types.NewNamed(types.NewTypeName(token.NoPos, impl, "Service", nil), types.NewStruct([]*types.Var{f}, nil), nil)
			return types.NewPointer(svc)
		}, "database/sql.DB"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pub := types.NewPackage(module+"/service", "service")
			pub.Scope().Insert(types.NewVar(token.NoPos, pub, "V", c.t(pub)))
			pub.MarkComplete()
			s := &Surface{Module: module, Packages: []*types.Package{pub}}
			var found []string
			for _, r := range s.Refs() {
				if forbidden(r.Type, module) != "" {
					found = append(found, r.Where+": "+r.Type.Pkg().Path()+"."+r.Type.Name())
				}
			}
			if len(found) != 1 || !strings.HasSuffix(found[0], c.want) {
				t.Errorf("found %q, want one ref to %s", found, c.want)
			}
		})
	}
	// Allowed: the same names from elsewhere, and a public package's own types.
	pub := types.NewPackage(module+"/service", "service")
	pub.Scope().Insert(types.NewVar(token.NoPos, pub, "DB", typeIn(pub, "DB")))
	pub.Scope().Insert(types.NewVar(token.NoPos, pub, "Req", types.NewPointer(typeIn(types.NewPackage("net/http", "http"), "Request"))))
	s := &Surface{Module: module, Packages: []*types.Package{pub}}
	for _, r := range s.Refs() {
		if why := forbidden(r.Type, module); why != "" {
			t.Errorf("%s: %s.%s refused (%s), want allowed", r.Where, r.Type.Pkg().Path(), r.Type.Name(), why)
		}
	}
}

// lineDiff lists the lines only one of two listings has, for a stale listing's message.
func lineDiff(old, new string) string {
	in := func(text string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(text, "\n") {
			m[l] = true
		}
		return m
	}
	was, is := in(old), in(new)
	var b strings.Builder
	for _, l := range strings.Split(old, "\n") {
		if !is[l] {
			b.WriteString("- " + l + "\n")
		}
	}
	for _, l := range strings.Split(new, "\n") {
		if !was[l] {
			b.WriteString("+ " + l + "\n")
		}
	}
	return b.String()
}

// TestReachedInternalTypeIsListed checks that a type of an internal package handed out by a
// public signature is listed with its exported fields and methods.
func TestReachedInternalTypeIsListed(t *testing.T) {
	const module = "example.com/m"
	impl := types.NewPackage(module+"/internal/service", "service")
	f := types.NewField(token.NoPos, impl, "Workers", types.Typ[types.Int], false)
	hidden := types.NewField(token.NoPos, impl, "db", types.Typ[types.Int], false)
	svc := types.NewNamed(types.NewTypeName(token.NoPos, impl, "Service", nil), types.NewStruct([]*types.Var{f, hidden}, nil), nil)
	pub := types.NewPackage(module+"/service", "service")
	sig := types.NewSignatureType(nil, nil, nil, nil, types.NewTuple(types.NewVar(token.NoPos, pub, "", types.NewPointer(svc))), false)
	pub.Scope().Insert(types.NewFunc(token.NoPos, pub, "Open", sig))
	s := &Surface{Module: module, Packages: []*types.Package{pub}}
	got := strings.Join(s.Lines(), "\n")
	want := strings.Join([]string{
		"pkg internal/service (reached from service.Open), type Service struct",
		"pkg internal/service (reached from service.Open), type Service struct, Workers int",
		"pkg service, func Open() *internal/service.Service",
	}, "\n")
	if got != want {
		t.Errorf("listing:\n%s\nwant:\n%s", got, want)
	}
}
