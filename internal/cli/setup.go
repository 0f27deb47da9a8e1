package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/broker"
	"github.com/scorekit/scorekit/host/process"
	"github.com/scorekit/scorekit/host/wasm"
	"github.com/scorekit/scorekit/internal/service/telemetry"
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
	// telemetry, when set, traces the judge's calls and the service's jobs.
	telemetry *telemetry.T
	// requireSandbox: --require-sandbox.
	requireSandbox bool
}

// hostParts is the host a command runs scorers on, and what it was assembled from.
type hostParts struct {
	host *host.Host
	// judge is the broker behind the host's judge; nil when none is configured.
	judge *broker.Broker
	cfg   fileConfig
	// close releases the plugins and the judge.
	close func(context.Context) error
}

// openHost is assembleHost for a command that needs only the host (score).
func (e *env) openHost(ctx context.Context, o hostOptions) (*host.Host, fileConfig, func(context.Context) error, error) {
	p, err := e.assembleHost(ctx, o)
	return p.host, p.cfg, p.close, err
}

// assembleHost reads the config file, loads the plugins, starts the judge broker when one
// is configured and proves it when a scorer will need it, and returns a host over all of
// it.
func (e *env) assembleHost(ctx context.Context, o hostOptions) (hostParts, error) {
	cfg, err := readConfig(o.config)
	if err != nil {
		return hostParts{cfg: cfg}, err
	}
	jc := cfg.Judge.merge(o.judge)
	b, err := newJudge(jc)
	if err != nil {
		return hostParts{cfg: cfg}, err
	}
	closeJudge := func() {
		if b != nil {
			_ = b.Close()
		}
	}
	confine := process.ConfineAuto
	if o.requireSandbox || cfg.RequireSandbox {
		confine = process.ConfineRequired
	}
	reg, closeReg, err := e.openRegistry(ctx, o.builtins, o.plugins, confine)
	if err != nil {
		closeJudge()
		return hostParts{cfg: cfg}, err
	}
	closeAll := func(ctx context.Context) error {
		closeJudge()
		return closeReg(ctx)
	}
	if err := cfg.checkScorerNames(reg.Names()); err != nil {
		_ = closeAll(ctx)
		return hostParts{cfg: cfg}, err
	}
	if err := checkJudge(ctx, jc, b, reg, o.scorers); err != nil {
		_ = closeAll(ctx)
		return hostParts{cfg: cfg}, err
	}
	opts := []host.Option{host.WithTimeout(o.timeout), host.WithLogger(e.logger()), host.WithRunLimits(cfg.RunLimits)}
	if b != nil { // a nil *broker.Broker in sdk.Judge would look like a judge
		opts = append(opts, host.WithJudge(o.telemetry.Judge(b)))
	}
	return hostParts{host: host.New(reg, opts...), judge: b, cfg: cfg, close: closeAll}, nil
}

// openRegistry returns the built-in scorers, replaced by the ones in the builtins manifest
// when given, plus the plugins in dirs, loaded by host.LoadPlugins (a plugin that fails is
// recorded in the registry and logged, and the others load; a scorer replaces a
// registered one only when its manifest says so), and a func that releases what loading
// holds (plugins, processes, the WASM engine and its compilation cache).
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
	paths = append(paths, dirs...)
	rt := &runtimes{log: e.logger(), confine: confine}
	loaded, err := host.LoadPlugins(ctx, reg, paths, host.LoadOptions{Loaders: rt.loaders(), Logger: rt.log})
	if err != nil {
		_ = rt.close(ctx)
		return nil, nil, fmt.Errorf("--plugins: %w", err)
	}
	return reg, func(ctx context.Context) error { return errors.Join(loaded.Close(ctx), rt.close(ctx)) }, nil
}

// runtimes loads plugins in the WASM and process runtimes. The WASM engine, and with it
// the compilation cache on disk, is made for the first WASM manifest only.
type runtimes struct {
	log *slog.Logger
	// confine is how far process plugins are confined.
	confine process.Confinement

	once   sync.Once
	engine *wasm.Engine
	err    error
}

// loaders are the loaders of host.LoadOptions.
func (r *runtimes) loaders() map[string]host.Loader {
	return map[string]host.Loader{
		host.RuntimeWASM: host.LoaderFunc(r.loadWASM),
		host.RuntimeProcess: host.LoaderFunc(func(ctx context.Context, m host.Manifest) ([]host.Plugin, error) {
			return process.Load(ctx, m, process.Options{Logger: r.log, Confine: r.confine})
		}),
	}
}

func (r *runtimes) loadWASM(ctx context.Context, m host.Manifest) ([]host.Plugin, error) {
	r.once.Do(func() { r.engine, r.err = wasm.NewEngine(ctx, wasm.Options{Logger: r.log}) })
	if r.err != nil {
		return nil, r.err
	}
	return r.engine.Load(ctx, m)
}

// close closes the WASM engine, when one was made.
func (r *runtimes) close(ctx context.Context) error {
	if r.engine == nil {
		return nil
	}
	return r.engine.Close(ctx)
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
