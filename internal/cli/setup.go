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
	"time"

	"github.com/spf13/cobra"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/process"
	"github.com/scorekit/scorekit/host/wasm"
	"github.com/scorekit/scorekit/sdk"
	"github.com/scorekit/scorekit/service/telemetry"
)

// requireSandboxFlag adds --require-sandbox to cmd.
func requireSandboxFlag(cmd *cobra.Command, require *bool) {
	cmd.Flags().BoolVar(require, "require-sandbox", false,
		"refuse to load a process plugin that cannot be confined here (bubblewrap, the memory and pids cgroup controllers, prlimit), instead of running it degraded; the config file's \"require_sandbox\" says the same")
}

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
	// requireSandbox: --require-sandbox.
	requireSandbox bool
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
	confine := process.ConfineAuto
	if o.requireSandbox || cfg.RequireSandbox {
		confine = process.ConfineRequired
	}
	reg, closeReg, err := e.openRegistry(ctx, o.builtins, o.plugins, confine)
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
// confine is how far process plugins must be confined (ConfineRequired refuses one that
// cannot be).
func (e *env) openRegistry(ctx context.Context, builtins string, dirs []string, confine process.Confinement) (*host.Registry, func(context.Context) error, error) {
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
	l := loader{log: e.logger(), reg: reg, confine: confine}
	for _, path := range paths {
		l.load(ctx, path)
	}
	return reg, l.close, nil
}

// loader loads plugins into a registry one at a time, each failure its own.
type loader struct {
	log    *slog.Logger
	reg    *host.Registry
	engine *wasm.Engine
	loaded []host.Plugin
	// confine is how far process plugins are confined.
	confine process.Confinement
}

func (l *loader) load(ctx context.Context, path string) {
	m, err := host.ReadManifest(path)
	if err != nil {
		l.fail(host.LoadFailure{Plugin: strings.TrimSuffix(filepath.Base(path), host.ManifestSuffix), Manifest: path, Err: err})
		return
	}
	failure := host.LoadFailure{Plugin: m.Name, Manifest: path, Runtime: m.Runtime, Scorers: m.Scorers, Replaces: m.Replaces}
	var ps []host.Plugin
	switch m.Runtime {
	case host.RuntimeWASM:
		if l.engine == nil {
			if l.engine, err = wasm.NewEngine(ctx, wasm.Options{Logger: l.log}); err != nil {
				failure.Err = err
				l.fail(failure)
				return
			}
		}
		ps, err = l.engine.Load(ctx, m)
	case host.RuntimeProcess:
		ps, err = process.Load(ctx, m, process.Options{Logger: l.log, Confine: l.confine})
	}
	if err != nil {
		failure.Err = err
		l.fail(failure)
		return
	}
	for _, p := range ps {
		if err := l.register(p, &m); err != nil {
			_ = p.Close(ctx)
			failure.Scorers, failure.Err = []string{p.Info().Name}, err
			l.fail(failure)
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
