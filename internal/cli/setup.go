package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/spf13/cobra"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/process"
	"github.com/scorekit/scorekit/host/wasm"
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
	timeout time.Duration
	judge   judgeConfig // judge flags; they win over the config file's
}

// openHost reads the config file, loads the plugins, starts the judge broker when one is
// configured and returns a host over all of it, the config, and a func that releases it.
func (e *env) openHost(ctx context.Context, o hostOptions) (*host.Host, fileConfig, func(context.Context) error, error) {
	cfg, err := readConfig(o.config)
	if err != nil {
		return nil, cfg, nil, err
	}
	judge, closeJudge, err := newJudge(cfg.Judge.merge(o.judge))
	if err != nil {
		return nil, cfg, nil, err
	}
	reg, closeReg, err := e.openRegistry(ctx, o.plugins)
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
	h := host.New(reg, host.WithTimeout(o.timeout), host.WithJudge(judge), host.WithLogger(e.logger()))
	return h, cfg, closeAll, nil
}

// openRegistry returns the built-in scorers plus the plugins in dirs, and a func that
// releases what loading the plugins holds (compiled modules, the compilation cache).
func (e *env) openRegistry(ctx context.Context, dirs []string) (*host.Registry, func(context.Context) error, error) {
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
	for _, dir := range dirs {
		paths, err := host.ManifestsIn(dir)
		if err != nil {
			return fail(fmt.Errorf("--plugins %s: %w", dir, err))
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
	}
	return reg, closeFn, nil
}
