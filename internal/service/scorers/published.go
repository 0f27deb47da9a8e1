package scorers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/wasm"
	"github.com/scorekit/scorekit/internal/service/store"
)

// Errors of published scorers callers branch on.
var (
	// ErrNoVersion: the tenant has no such version of the scorer (or it was deleted).
	ErrNoVersion = errors.New("no such scorer version")
	// ErrPinned: a config was given for a published scorer, whose config is pinned in
	// its version.
	ErrPinned = errors.New("config pinned in the published version")
)

// Source is where tenants' published scorers are kept: *store.Store is one. Every
// process reads them from it on first use, so a version published through one process
// is run by any other without a restart.
type Source interface {
	ScorerVersionOf(ctx context.Context, tenantID int64, name string, n int) (store.ScorerVersion, error)
	PromotedVersion(ctx context.Context, tenantID int64, name string) (int, error)
	Module(ctx context.Context, tenantID int64, digest string) ([]byte, error)
}

// Published says where tenants' published scorers come from and how their modules run.
type Published struct {
	// Source holds the versions and modules. Required.
	Source Source
	// Engine compiles and runs published WASM modules, each from its folder under
	// ModuleDir with the compilation cache in that folder (wasm.LoadOptions.CacheDir).
	// Optional. Default is none: a published WASM scorer is unavailable, with the reason.
	Engine *wasm.Engine
	// ModuleDir holds a folder per tenant (TenantDir) and in it a folder per module
	// (ModuleDir): the module as a file, for Engine to load (it loads from a manifest on
	// disk), and its compiled code, shared by the processes of a machine, so a module is
	// compiled once per tenant and machine. Required with Engine.
	ModuleDir string
}

// TenantKey names what a process keeps of a tenant (its folder on disk, its scorers
// opened): its id and the time it was created, never its name, and not the id alone, which
// SQLite gives again after the tenant with the highest id is deleted. A tenant created
// again under a deleted tenant's name finds nothing of the deleted one's.
func TenantKey(t store.Tenant) string {
	return strconv.FormatInt(t.ID, 10) + "-" + strconv.FormatInt(t.CreatedAt.UnixMicro(), 10)
}

// TenantDir is the tenant's folder under root (Published.ModuleDir).
func TenantDir(root string, t store.Tenant) string { return filepath.Join(root, TenantKey(t)) }

// ModuleDir is the folder of the tenant's module of digest under root: the module as the
// tenant's processes run it (ModuleFile) and wazero's compilation cache of it alone, so
// that removing the folder removes the module's compiled code and nothing else.
func ModuleDir(root string, t store.Tenant, digest string) string {
	return filepath.Join(TenantDir(root, t), strings.TrimPrefix(digest, "sha256:"))
}

// ModuleFile is the module's file in its ModuleDir.
const ModuleFile = "module.wasm"

// CompiledBytes is the size of the compiled code in a module's folder: every file but the
// module itself and the module being written (a dot file). A folder that does not exist
// holds none.
func CompiledBytes(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil
		case err != nil:
			return err
		case !d.Type().IsRegular() || path == filepath.Join(dir, ModuleFile) || strings.HasPrefix(d.Name(), "."):
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		n += info.Size()
		return nil
	})
	return n, err
}

// compiledRecorder records a module's compiled size where none is (*store.Store does).
type compiledRecorder interface {
	RecordCompiledSize(ctx context.Context, tenantID int64, digest string, size int64) error
}

// Option configures a Cache.
type Option func(*Cache)

// WithPublished makes the cache resolve tenants' published scorers (see [Cache.Resolve]).
// Optional. Default is the host's scorers only.
func WithPublished(p Published) Option { return func(c *Cache) { c.pub = &p } }

// Ref is a scorer as a request names it: "name", or "name@N" for version N of a
// tenant's published scorer ("name@0" is the host's own scorer of that name).
type Ref struct {
	Name string
	// Version is N of name@N; -1 when the ref names no version.
	Version int
}

// String is the ref as written.
func (r Ref) String() string {
	if r.Version < 0 {
		return r.Name
	}
	return r.Name + "@" + strconv.Itoa(r.Version)
}

// ParseRef reads "name" or "name@N".
func ParseRef(s string) (Ref, error) {
	name, v, ok := strings.Cut(s, "@")
	if !ok {
		return Ref{Name: s, Version: -1}, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || strconv.Itoa(n) != v {
		return Ref{}, fmt.Errorf("%w: scorer %q: a version is name@N with N a whole number (name@0 is the built-in)", host.ErrUnknownScorer, s)
	}
	return Ref{Name: name, Version: n}, nil
}

// Resolved is what a ref means for a tenant: the host's scorer, or a version the tenant
// published.
type Resolved struct {
	Name string
	// Published is the version, nil for the host's scorer.
	Published *store.ScorerVersion
	// Current is true when the plain name means the same now: the promoted version, or
	// the host's scorer of a name the tenant promoted none of.
	Current bool
}

// Resolve says what ref means for t, reading the store each time (promotion changes
// it): name@N is that published version; a plain name is the version the tenant
// promoted, else the host's scorer. A deleted version and another tenant's scorer are
// ErrNoVersion / host.ErrUnknownScorer alike.
func (c *Cache) Resolve(ctx context.Context, t store.Tenant, ref string) (Resolved, error) {
	var src Source
	if c.pub != nil {
		src = c.pub.Source
	}
	return c.ResolveIn(ctx, src, t, ref)
}

// ResolveIn is [Cache.Resolve] reading from src: a transaction in progress (on SQLite,
// the store's one connection is the transaction's until it ends).
func (c *Cache) ResolveIn(ctx context.Context, src Source, t store.Tenant, ref string) (Resolved, error) {
	r, err := ParseRef(ref)
	if err != nil {
		return Resolved{}, err
	}
	if c.pub == nil {
		if r.Version > 0 {
			return Resolved{}, fmt.Errorf("%w: scorer %q: this service keeps no published scorers", ErrNoVersion, ref)
		}
		return Resolved{Name: r.Name, Current: true}, nil
	}
	promoted, err := src.PromotedVersion(ctx, t.ID, r.Name)
	switch {
	case errors.Is(err, store.ErrNotFound):
		promoted = 0
	case err != nil:
		return Resolved{}, err
	}
	n := r.Version
	if n < 0 {
		n = promoted
	}
	if n == 0 {
		return Resolved{Name: r.Name, Current: promoted == 0}, nil
	}
	v, err := src.ScorerVersionOf(ctx, t.ID, r.Name, n)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return Resolved{}, fmt.Errorf("%w: scorer %s@%d", ErrNoVersion, r.Name, n)
	case err != nil:
		return Resolved{}, err
	case v.Deleted != nil:
		return Resolved{}, fmt.Errorf("%w: scorer %s@%d was deleted; its results stay, but it runs no more", ErrNoVersion, r.Name, n)
	}
	return Resolved{Name: r.Name, Published: &v, Current: n == promoted}, nil
}

// GetResolved is [Cache.Get] for what [Cache.Resolve] returned. A published version is
// opened once per tenant, version and tenant limits and kept: a version never changes.
func (c *Cache) GetResolved(ctx context.Context, t store.Tenant, r Resolved, config json.RawMessage) (*host.Scorer, func(), error) {
	if r.Published == nil {
		return c.Get(ctx, t, r.Name, config)
	}
	v := r.Published
	if len(strings.TrimSpace(string(config))) > 0 {
		return nil, nil, fmt.Errorf("%w: scorer %s@%d is published with its config; publish a new version to change it", ErrPinned, v.Name, v.Version)
	}
	return c.getVersion(ctx, t, v.Name, v.Version, func(context.Context) (*store.ScorerVersion, error) { return v, nil })
}

// GetVersion returns version n of the tenant's published scorer name, read from the
// store only when this process has not opened it yet: a job asks for it per run, and a
// version never changes.
func (c *Cache) GetVersion(ctx context.Context, t store.Tenant, name string, n int) (*host.Scorer, func(), error) {
	return c.getVersion(ctx, t, name, n, func(ctx context.Context) (*store.ScorerVersion, error) {
		r, err := c.Resolve(ctx, t, fmt.Sprintf("%s@%d", name, n))
		if err != nil {
			return nil, err
		}
		if r.Published == nil {
			return nil, fmt.Errorf("%w: scorer %s@%d", ErrNoVersion, name, n)
		}
		return r.Published, nil
	})
}

func (c *Cache) getVersion(ctx context.Context, t store.Tenant, name string, n int, version func(context.Context) (*store.ScorerVersion, error)) (*host.Scorer, func(), error) {
	lim, _ := json.Marshal([]any{t.Policy.Limits, t.Policy.Judge})
	// By TenantKey: a tenant created again under a deleted one's name never gets the
	// deleted one's version name@n.
	key := fmt.Sprintf("%s\x00@%s\x00%d\x00%s", TenantKey(t), name, n, lim)
	return c.get(ctx, t, key, func(ctx context.Context) (*host.Scorer, func(context.Context) error, error) {
		v, err := version(ctx)
		if err != nil {
			return nil, nil, err
		}
		if v.Kind == store.KindConfigured && !t.Policy.Allows(v.Base) {
			return nil, nil, fmt.Errorf("scorer %s@%d configures %q: %w (allowed: %v)", v.Name, v.Version, v.Base, ErrNotAllowed, t.Policy.Scorers)
		}
		return c.openPublished(ctx, t, v)
	})
}

// openPublished opens a version: a configured one on the host's scorer with its config,
// a WASM one from its module, loaded for this tenant alone.
func (c *Cache) openPublished(ctx context.Context, t store.Tenant, v *store.ScorerVersion) (*host.Scorer, func(context.Context) error, error) {
	opts := host.OpenOptions{Tenant: t.Name, Limits: t.Policy.Limits, Config: v.Config}
	if v.Kind == store.KindConfigured {
		sc, err := c.h.Open(ctx, v.Base, opts)
		return sc, nil, err
	}
	if c.pub.Engine == nil {
		return nil, nil, fmt.Errorf("%w: scorer %s@%d is a WASM module and this process runs none; give the service a WASM engine", host.ErrUnavailable, v.Name, v.Version)
	}
	var man Manifest
	if err := json.Unmarshal(v.Manifest, &man); err != nil {
		return nil, nil, fmt.Errorf("scorer %s@%d: stored manifest: %w", v.Name, v.Version, err)
	}
	path, sum, err := c.moduleFile(ctx, t, v.Digest)
	if err != nil {
		return nil, nil, err
	}
	dir := filepath.Dir(path)
	ps, err := c.pub.Engine.LoadWith(ctx, host.Manifest{Name: v.Name, Runtime: host.RuntimeWASM, Artifact: path, SHA256: sum, Limits: man.Limits},
		wasm.LoadOptions{CacheDir: dir})
	if err != nil {
		return nil, nil, fmt.Errorf("%w: scorer %s@%d: %w", host.ErrUnavailable, v.Name, v.Version, err)
	}
	if rec, ok := c.pub.Source.(compiledRecorder); ok {
		// A module stored before its compiled size was recorded counts it from now on.
		if n, err := CompiledBytes(dir); err == nil && n > 0 {
			_ = rec.RecordCompiledSize(ctx, t.ID, v.Digest, n)
		}
	}
	var (
		p      host.Plugin
		others []host.Plugin
	)
	for _, q := range ps {
		if q.Info().Name == man.Scorer && p == nil {
			p = q
		} else {
			others = append(others, q)
		}
	}
	for _, q := range others {
		_ = q.Close(ctx)
	}
	if p == nil {
		return nil, nil, fmt.Errorf("%w: scorer %s@%d: its module no longer declares %q", host.ErrUnavailable, v.Name, v.Version, man.Scorer)
	}
	sc, err := c.h.OpenPlugin(ctx, p, opts)
	if err != nil {
		_ = p.Close(ctx)
		return nil, nil, err
	}
	return sc, p.Close, nil
}

// Manifest is what a published WASM version runs under, as the store keeps it.
type Manifest struct {
	// Scorer is the scorer of the module the version runs. Optional when the module
	// carries one scorer.
	Scorer string `json:"scorer,omitempty"`
	// Limits the module runs under, within the service's ceilings. Optional. Zero fields
	// take the service's defaults.
	Limits host.Limits `json:"limits,omitzero"`
}

// moduleFile writes the tenant's module of digest where Engine loads it from (ModuleDir),
// once, and returns its path and the sha256 of the file. The file is the module with a
// custom section naming the tenant (TenantModule).
func (c *Cache) moduleFile(ctx context.Context, t store.Tenant, digest string) (string, string, error) {
	dir := ModuleDir(c.pub.ModuleDir, t, digest)
	path := filepath.Join(dir, ModuleFile)
	if b, err := os.ReadFile(path); err == nil {
		sum := sha256.Sum256(b)
		return path, hex.EncodeToString(sum[:]), nil
	}
	mod, err := c.pub.Source.Module(ctx, t.ID, digest)
	if err != nil {
		return "", "", fmt.Errorf("module %s: %w", digest, err)
	}
	if got := sha256.Sum256(mod); "sha256:"+hex.EncodeToString(got[:]) != digest {
		return "", "", fmt.Errorf("module %s: the stored bytes hash to %x; the store is damaged", digest, got)
	}
	b := TenantModule(t, mod)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", "", fmt.Errorf("module dir: %w", err)
	}
	// Written aside and renamed: another process may be loading the same file.
	tmp, err := os.CreateTemp(dir, ".module-*")
	if err != nil {
		return "", "", fmt.Errorf("module dir: %w", err)
	}
	_, err = tmp.Write(b)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return "", "", fmt.Errorf("module file: %w", err)
	}
	sum := sha256.Sum256(b)
	return path, hex.EncodeToString(sum[:]), nil
}

// tenantSection names the custom section that makes a module's bytes the tenant's.
const tenantSection = "scorekit.tenant"

// TenantSectionBytes is how many bytes TenantModule adds to a module.
const TenantSectionBytes = 1 + 1 + 1 + len(tenantSection) + 32

// TenantModule is the module as the tenant's processes compile and run it: the module
// with a custom section naming the tenant (a hash of its TenantKey), which the module's
// code never sees. Each tenant compiles into a cache of its own (ModuleDir); the section
// makes the compiled code's key the tenant's too, so no cache folder shared by mistake
// could make a tenant's first use quicker because another tenant uses the same bytes.
func TenantModule(t store.Tenant, mod []byte) []byte {
	salt := sha256.Sum256([]byte("scorekit tenant\x00" + TenantKey(t)))
	return slices.Concat(mod, customSection(tenantSection, salt[:]))
}

// customSection encodes a WebAssembly custom section (id 0) called name holding payload.
func customSection(name string, payload []byte) []byte {
	body := append(uleb(uint64(len(name))), name...)
	body = append(body, payload...)
	return append(append([]byte{0}, uleb(uint64(len(body)))...), body...)
}

func uleb(v uint64) []byte {
	var out []byte
	for {
		b := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			b |= 0x80
		}
		out = append(out, b)
		if v == 0 {
			return out
		}
	}
}
