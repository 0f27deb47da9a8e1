package wasm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/internal/wasmabi"
	"github.com/scorekit/scorekit/sdk"
)

// Options configures an Engine.
type Options struct {
	// CacheDir holds compiled code across processes, so a warm load skips compilation.
	// Optional. Default is os.UserCacheDir()/scorekit/wazero; "-" for none on disk (an
	// engine whose loads each name their own, LoadOptions.CacheDir).
	CacheDir string
	// Logger receives guest log lines and captured stdout/stderr. Optional. Default is
	// slog.Default().
	Logger *slog.Logger
	// Limits apply where a plugin's manifest leaves a field zero. Optional. Zero fields
	// take DefaultLimits; no field exceeds Ceilings.
	Limits host.Limits
	// Ceilings are the most a manifest may ask for: a manifest asking for more is a load
	// error naming the ceiling. Optional. Zero fields take DefaultCeilings.
	Ceilings host.Limits
	// LoadTimeout bounds making an instance (its start function and _initialize), and
	// loading a plugin (a first instance and its info), so a plugin that never finishes
	// starting cannot hold up the others. It is separate from the call deadline: a slow
	// start is not a slow call, and an instance made while a call waits serves the next
	// one. Optional. Default is 10 s.
	LoadTimeout time.Duration
	// MaxTableEntries bounds all of an instance's tables together: a table grows only
	// within it (table.grow answers -1 beyond), and a module whose tables or element
	// segments start larger does not load. Each entry takes 8 bytes of host memory, outside
	// the instance's memory limit. Optional. Default is DefaultMaxTableEntries (8 MiB).
	MaxTableEntries int
	// MemoryBudgetBytes bounds the linear memory that the instances of all pools (every
	// tenant, every artifact) keep between calls: past it the least recently used idle
	// instances are closed. A call never fails for it; one that finds no idle instance
	// makes one. Optional. Default is DefaultMemoryBudget; negative for none.
	MemoryBudgetBytes int64

	// termination selects how guests are stopped; only benchmarks set it, to measure
	// the alternatives in the same run (RATIONALE.md).
	termination termination
	// stack changes the stack bound's instrumentation (stack.go); only tests and
	// benchmarks set it, to measure what guests use and what the bound costs.
	stack stackInstrumentation
	// abiV1 calls every guest as ABI v1 (one call per run) even when it speaks v2; only
	// tests and benchmarks set it, to hold the two paths to the same results and measure
	// what batches buy.
	abiV1 bool
	// guestEnv adds environment variables to every instance's; only benchmarks set it,
	// to measure a Go guest's collector settings in one process.
	guestEnv [][2]string
}

// termination is a way to stop a guest at its deadline.
type termination int

const (
	// terminateChecks: the checks instrument adds (the default).
	terminateChecks termination = iota
	// terminateWazero: wazero's WithCloseOnContextDone, unmodified module.
	terminateWazero
	// terminateNone: nothing stops a guest. Unsafe; for measuring the others' cost.
	terminateNone
)

// DefaultLimits are the limits a plugin runs under when neither its manifest nor the
// engine's Options set them. The deadline is the host's, as in every runtime.
func DefaultLimits() host.Limits {
	return host.Limits{
		MemoryMiB:      64,
		TimeoutMS:      int(host.DefaultTimeout / time.Millisecond),
		MaxResultBytes: 1 << 20,
		MaxOutputBytes: 16 << 10,
		PoolSize:       4,
		MaxCalls:       10_000,
		StackKiB:       DefaultStackKiB,
	}
}

// DefaultCeilings are the most a plugin's manifest may ask for when the engine's Options
// set no ceilings. With them one tenant's pool of an artifact holds at most
// 16 x 256 MiB of guest memory.
func DefaultCeilings() host.Limits {
	return host.Limits{
		MemoryMiB:      256,
		TimeoutMS:      int(2 * time.Minute / time.Millisecond),
		MaxResultBytes: 8 << 20,
		MaxOutputBytes: 1 << 20,
		PoolSize:       16,
		MaxCalls:       100_000,
		StackKiB:       MaxStackKiB,
	}
}

// Engine loads WASM plugins. It shares one compilation cache between them; each loaded
// artifact gets its own runtime, because limits differ per manifest. It is safe for
// concurrent use.
type Engine struct {
	opts   Options
	cache  wazero.CompilationCache
	budget *memoryBudget

	mu     sync.Mutex
	arts   []*artifact
	closed bool
}

// NewEngine returns an engine whose compiled code is cached in opts.CacheDir.
func NewEngine(_ context.Context, opts Options) (*Engine, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.LoadTimeout <= 0 {
		opts.LoadTimeout = 10 * time.Second
	}
	if opts.MaxTableEntries <= 0 {
		opts.MaxTableEntries = DefaultMaxTableEntries
	}
	opts.Ceilings = merge(opts.Ceilings, DefaultCeilings())
	opts.Limits = merge(opts.Limits, DefaultLimits()).Lower(opts.Ceilings)
	if opts.CacheDir == "" {
		dir, err := defaultCacheDir()
		if err != nil {
			return nil, fmt.Errorf("wasm engine: %w; set Options.CacheDir", err)
		}
		opts.CacheDir = dir
	}
	cache := wazero.NewCompilationCache()
	if opts.CacheDir != "-" {
		var err error
		if cache, err = wazero.NewCompilationCacheWithDir(opts.CacheDir); err != nil {
			return nil, fmt.Errorf("wasm engine: compilation cache %s: %w; set Options.CacheDir to a writable folder", opts.CacheDir, err)
		}
	}
	if opts.MemoryBudgetBytes == 0 {
		opts.MemoryBudgetBytes = DefaultMemoryBudget
	}
	return &Engine{opts: opts, cache: cache, budget: &memoryBudget{limit: opts.MemoryBudgetBytes}}, nil
}

// defaultCacheDir is the compilation cache of Engines and Vet when none is set.
func defaultCacheDir() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no user cache dir (%w)", err)
	}
	return filepath.Join(dir, "scorekit", "wazero"), nil
}

// LoadDir loads the WASM plugins whose manifests (*.plugin.json) are in dir and registers
// their scorers in reg, as [host.LoadPlugins] does for every runtime: a plugin that fails
// is recorded in reg and in the answer, and the others load; a scorer replaces one in reg
// only when its manifest says so. Manifests of other runtimes are left to their runtime
// (the answer's Skipped). The error is for a folder that cannot be read or holds no
// manifest.
func (e *Engine) LoadDir(ctx context.Context, reg *host.Registry, dir string) (*host.Loaded, error) {
	return host.LoadPlugins(ctx, reg, []string{dir}, host.LoadOptions{Loaders: map[string]host.Loader{host.RuntimeWASM: e}, Logger: e.opts.Logger})
}

// Load checks m's artifact against its sha256, compiles it, checks its imports and
// exports against ABI v1, asks it for its scorers and returns one Plugin per scorer.
func (e *Engine) Load(ctx context.Context, m host.Manifest) ([]host.Plugin, error) {
	return e.LoadWith(ctx, m, LoadOptions{})
}

// LoadOptions change one load of an Engine.
type LoadOptions struct {
	// CacheDir is the compilation cache of this artifact alone, instead of the engine's
	// Options.CacheDir: a folder the caller can remove with the artifact (wazero's cache
	// names its files by internal keys and deletes none). The cache is closed with the
	// artifact's last plugin. Optional.
	CacheDir string
}

// LoadWith is Load with o.
func (e *Engine) LoadWith(ctx context.Context, m host.Manifest, o LoadOptions) ([]host.Plugin, error) {
	if m.Runtime != host.RuntimeWASM {
		return nil, fmt.Errorf("load plugin %s: runtime %q: the wasm engine loads only runtime %q", m.Name, m.Runtime, host.RuntimeWASM)
	}
	if _, err := m.Limits.Within(e.opts.Ceilings); err != nil {
		return nil, fmt.Errorf("load plugin %s: %w; the engine's ceilings are set by wasm.Options.Ceilings", m.Name, err)
	}
	bin, err := m.ReadArtifact()
	if err != nil {
		return nil, fmt.Errorf("load plugin: %w", err)
	}
	lim := merge(m.Limits, e.opts.Limits)
	cache, own := e.cache, wazero.CompilationCache(nil)
	if o.CacheDir != "" {
		if own, err = wazero.NewCompilationCacheWithDir(o.CacheDir); err != nil {
			return nil, fmt.Errorf("load plugin %s: compilation cache: %w", m.Name, err)
		}
		cache = own
	}
	cfg := wazero.NewRuntimeConfig().
		// The checks instrument adds (interrupt.go) stop guests at their deadline instead.
		WithCloseOnContextDone(e.opts.termination == terminateWazero).
		WithMemoryLimitPages(uint32(lim.MemoryMiB) * 16).
		WithCompilationCache(cache)
	rt := wazero.NewRuntimeWithConfig(ctx, cfg)
	a := &artifact{
		name:   m.Name,
		path:   m.ArtifactPath(),
		limits: lim,
		rt:     rt,
		cache:  own,
		log:    e.opts.Logger.With("plugin", m.Name),
		pools:  map[poolKey]*pool{},
		budget: e.budget,

		loadTimeout:     e.opts.LoadTimeout,
		maxTableEntries: e.opts.MaxTableEntries,
		termination:     e.opts.termination,
		stack:           e.opts.stack,
		abiV1:           e.opts.abiV1,
		guestEnv:        e.opts.guestEnv,
	}
	if err := a.init(ctx, bin); err != nil {
		_ = a.close(ctx)
		return nil, fmt.Errorf("load plugin %s: %w", m.Name, err)
	}
	if len(m.Scorers) > 0 {
		names := a.names()
		if !slices.Equal(slices.Sorted(slices.Values(m.Scorers)), slices.Sorted(slices.Values(names))) {
			_ = a.close(ctx)
			return nil, fmt.Errorf("load plugin %s: manifest lists scorers %v, %s carries %v; fix \"scorers\" in the manifest",
				m.Name, m.Scorers, a.path, names)
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		_ = a.close(ctx)
		return nil, fmt.Errorf("load plugin %s: engine %w", m.Name, ErrClosed)
	}
	e.arts = append(e.arts, a)
	out := make([]host.Plugin, len(a.infos))
	for i := range a.infos {
		out[i] = &plugin{a: a, index: uint32(i), info: a.infos[i]}
	}
	a.refs = len(out)
	return out, nil
}

// Close closes every loaded plugin and the compilation cache.
func (e *Engine) Close(ctx context.Context) error {
	e.mu.Lock()
	arts := e.arts
	e.arts, e.closed = nil, true
	e.mu.Unlock()
	var errs []error
	for _, a := range arts {
		errs = append(errs, a.close(ctx))
	}
	errs = append(errs, e.cache.Close(ctx))
	return errors.Join(errs...)
}

// artifact is one compiled module in its own runtime, shared by its scorers' plugins.
type artifact struct {
	name   string
	path   string
	limits host.Limits
	rt     wazero.Runtime
	// cache is the artifact's own compilation cache (LoadOptions.CacheDir), closed after
	// rt; nil when it uses the engine's.
	cache     wazero.CompilationCache
	closeOnce sync.Once
	closeErr  error
	cm        wazero.CompiledModule
	infos     []sdk.Info
	log       *slog.Logger
	// binary is true when the guest speaks the binary codec (wasmabi.CodecBinary).
	binary bool
	// batch is true when the guest speaks ABI v2 (wasmabi.ExportScoreBatch): every run goes
	// through its batch export, batches of one included. abiV1 keeps it false.
	batch, abiV1 bool
	guestEnv     [][2]string
	// minMemory is the memory the module starts with, in bytes.
	minMemory int
	// loadTimeout bounds making an instance (Options.LoadTimeout).
	loadTimeout time.Duration
	// maxTableEntries bounds the instance's tables (Options.MaxTableEntries).
	maxTableEntries int
	termination     termination
	stack           stackInstrumentation

	// budget bounds the memory the engine's pools keep.
	budget *memoryBudget

	mu    sync.Mutex
	refs  int
	pools map[poolKey]*pool
}

func (a *artifact) init(ctx context.Context, bin []byte) error {
	if err := a.compile(ctx, bin); err != nil {
		return err
	}
	return a.probe(ctx)
}

// compile bounds the module's tables, adds the interrupt checks, compiles it (through the
// compilation cache) and checks its imports and exports. Compilation is the step whose
// time and memory wazero does not bound: Vet runs it in a child process first.
func (a *artifact) compile(ctx context.Context, bin []byte) error {
	bin, err := boundModule(bin, a.maxTableEntries)
	if err != nil {
		return fmt.Errorf("%s: %w", a.path, err)
	}
	if pages, ok := initialPages(bin); ok && pages<<16 > uint64(a.limits.MemoryMiB)<<20 {
		return &sdk.Error{Code: sdk.CodeLimitExceeded, Message: fmt.Sprintf(
			"the module starts with %d MiB of memory, over the %d MiB limit; raise limits.memory_mib or shrink the module's initial memory",
			pages>>4, a.limits.MemoryMiB)}
	}
	if a.termination == terminateChecks {
		if bin, _, err = instrumentWith(bin, a.stack); err != nil {
			return fmt.Errorf("%s: %w; is it a valid WebAssembly module?", a.path, err)
		}
	}
	cm, err := a.rt.CompileModule(ctx, bin)
	if err != nil {
		return fmt.Errorf("compile %s: %w; is it a valid WebAssembly module?", a.path, err)
	}
	a.cm = cm
	if err := checkModule(cm); err != nil {
		return err
	}
	if mem, ok := cm.ExportedMemories()["memory"]; ok {
		a.minMemory = int(mem.Min()) << 16
	}
	return nil
}

// probe instantiates the compiled module once, under the load deadline, and asks it for
// its scorers and codecs.
func (a *artifact) probe(ctx context.Context) error {
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, a.rt); err != nil {
		return fmt.Errorf("instantiate wasi: %w", err)
	}
	if err := a.instantiateHostModule(ctx); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, a.loadTimeout)
	defer cancel()
	inst, err := a.newInstance(ctx, a.limits)
	if err != nil {
		return err
	}
	defer inst.close(context.WithoutCancel(ctx))
	if !inst.lin.hold() {
		return fmt.Errorf("probe %s: %w", a.path, ErrClosed)
	}
	defer inst.lin.unhold()
	if err := inst.call(ctx, inst.info); err != nil {
		kept, _ := inst.out.take()
		return fmt.Errorf("call %s: %w", wasmabi.ExportInfo, inst.failure(err, kept))
	}
	view, err := inst.reply(inst.stack[0], a.limits.MaxResultBytes)
	if err != nil {
		return fmt.Errorf("%s: %w", wasmabi.ExportInfo, err)
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(view, &raws); err != nil {
		return fmt.Errorf("%s: want a JSON array of scorer infos (docs/ABI.md): %w", wasmabi.ExportInfo, err)
	}
	a.infos = make([]sdk.Info, len(raws))
	for i, raw := range raws {
		if a.infos[i], err = host.DecodeInfo(raw); err != nil {
			return fmt.Errorf("%s[%d]: %w", wasmabi.ExportInfo, i, err)
		}
	}
	a.batch = inst.batch != nil && !a.abiV1
	if fn := inst.mod.ExportedFunction(wasmabi.ExportCodecs); fn != nil {
		if err := inst.call(ctx, fn); err != nil {
			return fmt.Errorf("call %s: %w", wasmabi.ExportCodecs, describe(err, ""))
		}
		codecs := uint32(inst.stack[0])
		rev := codecs >> wasmabi.CodecRevisionShift & 0xff
		a.binary = codecs&wasmabi.CodecBinary != 0 && rev == wasmabi.CodecRevision
		if codecs&wasmabi.CodecBinary != 0 && !a.binary {
			a.log.Warn("the guest speaks another revision of the binary codec; speaking JSON to it (rebuild it against this sdk for the faster codec)",
				"guest_revision", rev, "host_revision", wasmabi.CodecRevision)
		}
	}
	return checkInfos(a.infos)
}

func checkInfos(infos []sdk.Info) error {
	if len(infos) == 0 {
		return fmt.Errorf("%s returned no scorers; register at least one", wasmabi.ExportInfo)
	}
	seen := map[string]bool{}
	for _, in := range infos {
		if in.ABIVersion != sdk.ABIVersion {
			return fmt.Errorf("scorer %q: %w: built for ABI v%d, host speaks v%d; rebuild it against this sdk (docs/ABI.md)",
				in.Name, host.ErrABIMismatch, in.ABIVersion, sdk.ABIVersion)
		}
		if seen[in.Name] {
			return fmt.Errorf("scorer %q declared twice; give each scorer its own name", in.Name)
		}
		seen[in.Name] = true
	}
	return nil
}

func (a *artifact) names() []string {
	out := make([]string, len(a.infos))
	for i, in := range a.infos {
		out[i] = in.Name
	}
	return out
}

func (a *artifact) timeout() time.Duration {
	return time.Duration(a.limits.TimeoutMS) * time.Millisecond
}

// release drops one plugin's reference and closes the runtime with the last one.
func (a *artifact) release(ctx context.Context) error {
	a.mu.Lock()
	a.refs--
	last := a.refs == 0
	a.mu.Unlock()
	if last {
		return a.close(ctx)
	}
	return nil
}

// close closes the artifact's runtime, then its own compilation cache; once.
func (a *artifact) close(ctx context.Context) error {
	a.closeOnce.Do(func() {
		a.closeErr = a.rt.Close(ctx)
		if a.cache != nil {
			a.closeErr = errors.Join(a.closeErr, a.cache.Close(ctx))
		}
	})
	return a.closeErr
}

func merge(l, d host.Limits) host.Limits {
	pick := func(v, def int) int {
		if v > 0 {
			return v
		}
		return def
	}
	return host.Limits{
		MemoryMiB:      pick(l.MemoryMiB, d.MemoryMiB),
		TimeoutMS:      pick(l.TimeoutMS, d.TimeoutMS),
		MaxResultBytes: pick(l.MaxResultBytes, d.MaxResultBytes),
		MaxOutputBytes: pick(l.MaxOutputBytes, d.MaxOutputBytes),
		PoolSize:       pick(l.PoolSize, d.PoolSize),
		MaxCalls:       pick(l.MaxCalls, d.MaxCalls),
		StackKiB:       pick(l.StackKiB, d.StackKiB),
	}
}
