package service

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/scorekit/scorekit/internal/service/scorers"
	"github.com/scorekit/scorekit/internal/service/store"
)

// moduleFiles is what a process keeps on disk of tenants' published modules, under
// PublishConfig.CacheDir:
//
//	tenants/<tenant id>-<created, Unix µs>/<module sha256>/module.wasm   the module as it runs
//	tenants/<tenant id>-<created, Unix µs>/<module sha256>/wazero-*/...  its compiled code
//	scratch/<tenant key>-<random>/                                       a check in progress
//
// wazero's compilation cache is a folder whose files are named by keys of its own and
// which deletes nothing, so each module of each tenant gets a cache folder of its own
// (wasm.LoadOptions.CacheDir): removing the folder removes that module's compiled code
// and nothing else. The check at publish compiles into a scratch folder that becomes the
// module's folder when the version is stored and is removed otherwise. A tenant's folder
// goes with the tenant; a module's with the last version that needs it (RATIONALE.md,
// "Compiled code per tenant and module").
type moduleFiles struct {
	root string // PublishConfig.CacheDir
	log  *slog.Logger
}

func (f *moduleFiles) tenants() string { return filepath.Join(f.root, "tenants") }

func (f *moduleFiles) scratchRoot() string { return filepath.Join(f.root, "scratch") }

// scratchDir is one check's compilation cache.
type scratchDir struct {
	f      *moduleFiles
	dir    string
	target string
	placed bool
}

// scratch makes a check's folder for t's module of digest. When the tenant's folder of
// that module holds compiled code already (a version of it was published, or run, on
// this machine), the scratch folder starts with links to it, so checking the same module
// again does not compile it again.
func (f *moduleFiles) scratch(t store.Tenant, digest string) (*scratchDir, error) {
	if err := os.MkdirAll(f.scratchRoot(), 0o700); err != nil {
		return nil, fmt.Errorf("scratch folder: %w", err)
	}
	dir, err := os.MkdirTemp(f.scratchRoot(), scorers.TenantKey(t)+"-")
	if err != nil {
		return nil, fmt.Errorf("scratch folder: %w", err)
	}
	target := scorers.ModuleDir(f.tenants(), t, digest)
	linkCompiled(target, dir)
	return &scratchDir{f: f, dir: dir, target: target}, nil
}

// linkCompiled links the compiled code in src into dst, where it can; a file it cannot
// link is compiled again.
func linkCompiled(src, dst string) {
	_ = filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == src {
			return nil
		}
		rel, _ := filepath.Rel(src, path)
		switch {
		case d.IsDir():
			return os.MkdirAll(filepath.Join(dst, rel), 0o700)
		case d.Type().IsRegular() && rel != scorers.ModuleFile && !strings.HasPrefix(d.Name(), "."):
			_ = os.Link(path, filepath.Join(dst, rel))
		}
		return nil
	})
}

// writeModule writes the module as the tenant's processes run it (scorers.TenantModule)
// into the folder beside its compiled code, so that the first evaluation loads it from
// there instead of reading it from the store and hashing it against its digest again. A
// module it could not write is written then, from the store, as it would be on another
// machine.
func (s *scratchDir) writeModule(b []byte) {
	if err := os.WriteFile(filepath.Join(s.dir, scorers.ModuleFile), b, 0o600); err != nil {
		s.f.log.Warn("publish: keep the module beside its compiled code", "err", err)
	}
}

// place makes the scratch folder the tenant's folder of the module, unless that exists
// already (it holds the same code, compiled by the same compiler); it reports whether it
// did.
func (s *scratchDir) place() bool {
	if err := os.MkdirAll(filepath.Dir(s.target), 0o700); err != nil {
		s.f.log.Warn("publish: the tenant's module folder", "err", err)
		return false
	}
	err := os.Rename(s.dir, s.target)
	switch {
	case err == nil:
		s.placed = true
	case !errors.Is(err, fs.ErrExist): // ENOTEMPTY is one: the folder is there already
		s.f.log.Warn("publish: keep the checked module's compiled code", "err", err)
	}
	return s.placed
}

// discard removes the scratch folder unless it was placed.
func (s *scratchDir) discard() {
	if !s.placed {
		if err := os.RemoveAll(s.dir); err != nil {
			s.f.log.Warn("publish: remove a check's scratch folder", "dir", s.dir, "err", err)
		}
	}
}

// removeModule removes t's folder of the module of digest: its file and compiled code.
func (f *moduleFiles) removeModule(t store.Tenant, digest string) {
	if err := os.RemoveAll(scorers.ModuleDir(f.tenants(), t, digest)); err != nil {
		f.log.Warn("published scorers: remove a module's compiled code", "tenant", t.Name, "digest", digest, "err", err)
	}
}

// removeTenant removes t's folder: its modules and their compiled code.
func (f *moduleFiles) removeTenant(t store.Tenant) error {
	if err := os.RemoveAll(scorers.TenantDir(f.tenants(), t)); err != nil {
		return fmt.Errorf("remove tenant %s's published modules: %w", t.Name, err)
	}
	return nil
}

// staleScratch is how old a scratch folder is when no check can still be using it: a
// check ends within its compile timeout and its probe's deadlines (minutes).
const staleScratch = time.Hour

// sweep brings the folder to what the store holds, when a process opens the service: the
// layout before this one (one compilation cache for every tenant, in "wazero", and the
// modules in "modules", a folder per tenant named by a hash of its name) is removed,
// since nothing in it can be told apart by tenant and every module is in the store, to be
// written and compiled again on first use; scratch folders of checks that cannot be
// running any more go; and a tenant's folder goes when the tenant is no more (deleted
// through another process or machine), as does a module's folder no version needs.
func (f *moduleFiles) sweep(ctx context.Context, st *store.Store) error {
	for _, old := range []string{"wazero", "modules"} {
		dir := filepath.Join(f.root, old)
		if _, err := os.Stat(dir); err == nil {
			f.log.Info("published scorers: removing the compilation cache of the layout before per-tenant folders; modules compile again on first use", "dir", dir)
			if err := os.RemoveAll(dir); err != nil {
				return fmt.Errorf("remove the previous layout's %s: %w", dir, err)
			}
		}
	}
	if ents, err := os.ReadDir(f.scratchRoot()); err == nil {
		for _, e := range ents {
			if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > staleScratch {
				_ = os.RemoveAll(filepath.Join(f.scratchRoot(), e.Name()))
			}
		}
	}
	ents, err := os.ReadDir(f.tenants())
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	ts, err := st.Tenants(ctx)
	if err != nil {
		return err
	}
	byKey := map[string]store.Tenant{}
	for _, t := range ts {
		byKey[scorers.TenantKey(t)] = t
	}
	for _, e := range ents {
		t, ok := byKey[e.Name()]
		if !ok {
			if err := os.RemoveAll(filepath.Join(f.tenants(), e.Name())); err != nil {
				return fmt.Errorf("remove a deleted tenant's published modules: %w", err)
			}
			continue
		}
		mods, err := os.ReadDir(filepath.Join(f.tenants(), e.Name()))
		if err != nil {
			return err
		}
		for _, m := range mods {
			need, err := st.NeedsModule(ctx, t.ID, "sha256:"+m.Name())
			if err != nil {
				return err
			}
			if !need {
				f.removeModule(t, m.Name())
			}
		}
	}
	return nil
}
