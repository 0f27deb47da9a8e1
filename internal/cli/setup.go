package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
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
		"load the plugins whose manifests (*.plugin.json) are in DIR; repeatable. A plugin's scorer replaces the built-in of the same name")
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
	h := host.New(reg, host.WithTimeout(o.timeout), host.WithJudge(o.telemetry.Judge(judge)), host.WithLogger(e.logger()))
	return h, cfg, closeAll, nil
}

// openRegistry returns the built-in scorers, replaced by the ones in the builtins manifest
// when given, plus the plugins in dirs, and a func that releases what loading the plugins
// holds (compiled modules, processes, the compilation cache).
func (e *env) openRegistry(ctx context.Context, builtins string, dirs []string) (*host.Registry, func(context.Context) error, error) {
	reg, err := e.registry()
	if err != nil {
		return nil, nil, err
	}
	var (
		engine  *wasm.Engine
		loaded  []host.Plugin
		closeFn = func(ctx context.Context) error {
			var errs []error
			for _, p := range loaded {
				errs = append(errs, p.Close(ctx))
			}
			if engine != nil {
				errs = append(errs, engine.Close(ctx))
			}
			return errors.Join(errs...)
		}
	)
	fail := func(err error) (*host.Registry, func(context.Context) error, error) {
		_ = closeFn(context.WithoutCancel(ctx))
		return nil, nil, err
	}
	var paths []string
	if builtins != "" {
		paths = append(paths, builtins)
	}
	for _, dir := range dirs {
		found, err := host.ManifestsIn(dir)
		if err != nil {
			return fail(fmt.Errorf("--plugins %s: %w", dir, err))
		}
		paths = append(paths, found...)
	}
	for _, path := range paths {
		m, err := host.ReadManifest(path)
		if err != nil {
			return fail(err)
		}
		var ps []host.Plugin
		switch m.Runtime {
		case host.RuntimeWASM:
			if engine == nil {
				if engine, err = wasm.NewEngine(ctx, wasm.Options{Logger: e.logger()}); err != nil {
					return fail(err)
				}
			}
			ps, err = engine.Load(ctx, m)
		case host.RuntimeProcess:
			ps, err = process.Load(ctx, m, process.Options{Logger: e.logger()})
		}
		if err != nil {
			return fail(err)
		}
		loaded = append(loaded, ps...)
		for _, p := range ps {
			if err := reg.Register(p, true); err != nil {
				return fail(fmt.Errorf("%s: %w", path, err))
			}
		}
	}
	return reg, closeFn, nil
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
