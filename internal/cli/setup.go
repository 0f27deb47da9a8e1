package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/process"
	"github.com/scorekit/scorekit/host/wasm"
	"github.com/scorekit/scorekit/sdk"
	"github.com/scorekit/scorekit/service/telemetry"
)

// pluginDirsFlag adds --plugins to cmd.
func pluginDirsFlag(cmd *cobra.Command, dirs *[]string) {
	cmd.Flags().StringArrayVar(dirs, "plugins", nil,
		"load the plugins whose manifests (*.plugin.json) are in DIR; repeatable. A plugin's scorer replaces a built-in of the same name only when its manifest lists the name in \"replaces\"")
}

// logger is what the host and the runtimes log through: warnings and errors on stderr.
func (e *env) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// hostOptions are the settings score and serve share.
type hostOptions struct {
	config  string // --config file; "" for none
	plugins []string
	// builtins is the manifest of a WASM or process build of the built-in scorers, loaded
	// before plugins (--runtime wasm|process); "" for none.
	builtins string
	timeout  time.Duration
	judge    judgeConfig // judge flags; they win over the config file's
	// scorers the command will run, for the judge preflight; nil means any (serve).
	scorers []string
	// onJudge, when set, receives the judge the host was given (nil for none): the
	// service hands tenants' judge limits to it.
	onJudge func(sdk.Judge)
	// telemetry, when set, traces the judge's calls and the service's jobs.
	telemetry *telemetry.T
}

// openHost reads the config file, loads the plugins, starts the judge broker when one is
// configured and returns a host over all of it, the config, and a func that releases it.
func (e *env) openHost(ctx context.Context, o hostOptions) (*host.Host, fileConfig, func(context.Context) error, error) {
	cfg, err := readConfig(o.config)
	if err != nil {
		return nil, cfg, nil, err
	}
	jc := cfg.Judge.merge(o.judge)
	judge, closeJudge, err := newJudge(jc)
	if err != nil {
		return nil, cfg, nil, err
	}
	reg, closeReg, err := e.openRegistry(ctx, o.builtins, o.plugins)
	if err != nil {
		closeJudge()
		return nil, cfg, nil, err
	}
	closeAll := func(ctx context.Context) error {
		closeJudge()
		return closeReg(ctx)
	}
	if err := cfg.checkScorerNames(reg.Names()); err != nil {
		_ = closeAll(ctx)
		return nil, cfg, nil, err
	}
	if err := checkJudge(ctx, jc, judge, reg, o.scorers); err != nil {
		_ = closeAll(ctx)
		return nil, cfg, nil, err
	}
	if o.onJudge != nil {
		o.onJudge(judge)
	}
	h := host.New(reg, host.WithTimeout(o.timeout), host.WithJudge(o.telemetry.Judge(judge)), host.WithLogger(e.logger()), host.WithRunLimits(cfg.RunLimits))
	return h, cfg, closeAll, nil
}

// openRegistry returns the built-in scorers, replaced by the ones in the builtins manifest
// when given, plus the plugins in dirs, and a func that releases what loading the plugins
// holds (compiled modules, processes, the compilation cache). Loading fails per plugin: a
// plugin that cannot be read, verified, compiled, started or registered is recorded in
// the registry (host.Registry.Failures), logged, and the others load. A plugin scorer
// that takes the name of a scorer already registered is refused unless its manifest
// lists that name in "replaces".
func (e *env) openRegistry(ctx context.Context, builtins string, dirs []string) (*host.Registry, func(context.Context) error, error) {
	reg, err := e.registry()
	if err != nil {
		return nil, nil, err
	}
	var paths []string
	if builtins != "" {
		paths = append(paths, builtins)
	}
	for _, dir := range dirs {
		found, err := host.ManifestsIn(dir)
		if err != nil {
			return nil, nil, fmt.Errorf("--plugins %s: %w", dir, err)
		}
		paths = append(paths, found...)
	}
	l := loader{log: e.logger(), reg: reg}
	l.loadAll(ctx, paths)
	return reg, l.close, nil
}

// maxParallelLoads bounds the plugins loaded at once. Loading is mostly waiting (compiling,
// starting a process, a guest's _initialize running up to its load deadline), so plugins
// load together and a slow one holds up no other; they register in the order given, so
// which plugin wins a name does not depend on which loaded first.
const maxParallelLoads = 8

// loader loads plugins into a registry, each failure its own.
type loader struct {
	log *slog.Logger
	reg *host.Registry
	// open loads one plugin; tests replace it. Optional. Default is openPlugin.
	open func(ctx context.Context, path string) opened

	mu     sync.Mutex // guards engine while plugins load in parallel
	engine *wasm.Engine
	loaded []host.Plugin
}

// opened is one manifest's plugins, or why it has none.
type opened struct {
	m       host.Manifest
	ps      []host.Plugin
	failure host.LoadFailure // Err is set when the plugin did not load
}

func (l *loader) load(ctx context.Context, path string) { l.loadAll(ctx, []string{path}) }

// loadAll loads the plugins at paths, at most maxParallelLoads at once, and registers them
// in the order of paths.
func (l *loader) loadAll(ctx context.Context, paths []string) {
	open := l.open
	if open == nil {
		open = l.openPlugin
	}
	out := make([]opened, len(paths))
	sem := make(chan struct{}, maxParallelLoads)
	var wg sync.WaitGroup
	for i, path := range paths {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i] = open(ctx, path)
		})
	}
	wg.Wait()
	for _, o := range out {
		l.add(ctx, o)
	}
}

// openPlugin reads the manifest at path and loads its plugin.
func (l *loader) openPlugin(ctx context.Context, path string) opened {
	m, err := host.ReadManifest(path)
	if err != nil {
		return opened{failure: host.LoadFailure{Plugin: strings.TrimSuffix(filepath.Base(path), host.ManifestSuffix), Manifest: path, Err: err}}
	}
	o := opened{m: m, failure: host.LoadFailure{Plugin: m.Name, Manifest: path, Runtime: m.Runtime, Scorers: m.Scorers, Replaces: m.Replaces}}
	switch m.Runtime {
	case host.RuntimeWASM:
		var eng *wasm.Engine
		if eng, err = l.wasmEngine(ctx); err == nil {
			o.ps, err = eng.Load(ctx, m)
		}
	case host.RuntimeProcess:
		o.ps, err = process.Load(ctx, m, process.Options{Logger: l.log})
	}
	o.failure.Err = err
	return o
}

// wasmEngine returns the loader's WASM engine, made on first use.
func (l *loader) wasmEngine(ctx context.Context) (*wasm.Engine, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.engine == nil {
		e, err := wasm.NewEngine(ctx, wasm.Options{Logger: l.log})
		if err != nil {
			return nil, err
		}
		l.engine = e
	}
	return l.engine, nil
}

// add registers what open loaded, or records why it did not load.
func (l *loader) add(ctx context.Context, o opened) {
	if o.failure.Err != nil {
		l.fail(o.failure)
		return
	}
	for _, p := range o.ps {
		if err := l.register(p, &o.m); err != nil {
			_ = p.Close(ctx)
			f := o.failure
			f.Scorers, f.Err = []string{p.Info().Name}, err
			l.fail(f)
			continue
		}
		l.loaded = append(l.loaded, p)
	}
}

// register adds p, replacing a registered scorer only where the manifest opts in.
func (l *loader) register(p host.Plugin, m *host.Manifest) error {
	name := p.Info().Name
	if slices.Contains(l.reg.Names(), name) {
		if !m.MayReplace(name) {
			return fmt.Errorf("%w: scorer %s is registered already (built in, or from another plugin); to replace it, add \"replaces\": [%q] to %s's manifest",
				errShadowing, name, name, m.Name)
		}
		return l.reg.Replace(p, m.Name)
	}
	return l.reg.Register(p, false)
}

// errShadowing: a plugin scorer takes a registered name without opting in.
var errShadowing = errors.New("name taken")

func (l *loader) fail(f host.LoadFailure) {
	l.reg.Fail(f)
	l.log.Warn("plugin not loaded", "plugin", f.Plugin, "manifest", f.Manifest, "error", f.Err)
}

// close releases the loaded plugins and the WASM engine.
func (l *loader) close(ctx context.Context) error {
	var errs []error
	for _, p := range l.loaded {
		errs = append(errs, p.Close(ctx))
	}
	if l.engine != nil {
		errs = append(errs, l.engine.Close(ctx))
	}
	return errors.Join(errs...)
}

// builtinManifest finds the manifest of the built-in scorers built for runtime (make
// wasm-plugins or make process-plugins): under $SCOREKIT_BUILD if set, else build/ in the
// working directory, else build/ beside the directory of the scorekit executable (bin/).
func builtinManifest(runtime string) (string, error) {
	rel := filepath.Join(runtime, "builtin"+host.ManifestSuffix)
	var roots []string
	if d := os.Getenv("SCOREKIT_BUILD"); d != "" {
		roots = append(roots, d)
	}
	roots = append(roots, "build")
	if exe, err := os.Executable(); err == nil {
		roots = append(roots, filepath.Join(filepath.Dir(exe), "..", "build"))
	}
	for _, r := range roots {
		p := filepath.Join(r, rel)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("the built-in scorers have no %s build (looked for %s under %s): build it with make %s-plugins",
		runtime, rel, strings.Join(roots, ", "), runtime)
}
