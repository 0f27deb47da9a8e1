package host

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
)

// Loader loads the plugin (the artifact) one manifest describes, in one runtime, and
// returns its scorers, a [Plugin] each: host/wasm's Engine is the WASM loader, host/process's
// Load the process one. LoadPlugins calls it for several manifests at once, so it must be
// safe for concurrent use.
type Loader interface {
	Load(ctx context.Context, m Manifest) ([]Plugin, error)
}

// LoaderFunc makes a func a [Loader].
type LoaderFunc func(ctx context.Context, m Manifest) ([]Plugin, error)

// Load calls f.
func (f LoaderFunc) Load(ctx context.Context, m Manifest) ([]Plugin, error) { return f(ctx, m) }

// LoadOptions say how [LoadPlugins] loads.
type LoadOptions struct {
	// Loaders maps a runtime ([RuntimeWASM], [RuntimeProcess]) to what loads it. A
	// manifest whose runtime has none is left alone and listed in [Loaded.Skipped], for a
	// caller that loads one runtime. Required.
	Loaders map[string]Loader
	// Logger receives a warning per plugin that fails. Optional. Default is slog.Default().
	Logger *slog.Logger
	// Parallel is how many manifests load at once: a plugin that is slow to start (a WASM
	// start function that spins to its load deadline) holds up only its own slot. Loading
	// is mostly waiting (compiling, a process starting, a guest's _initialize running up to
	// its load deadline), so the default is not tied to the number of CPUs.
	// Optional. Default is DefaultParallelLoads.
	Parallel int
}

// Loaded is what [LoadPlugins] loaded.
type Loaded struct {
	// Plugins are the scorers registered, a [Plugin] each, in the order of their
	// manifests.
	Plugins []Plugin
	// Failures are the plugins, or single scorers, that did not load, in the order of
	// their manifests; the registry records them too ([Registry.Failures]).
	Failures []LoadFailure
	// Skipped are the manifests whose runtime has no loader in [LoadOptions.Loaders].
	Skipped []string
}

// Err joins the failures, or is nil when every plugin loaded: for a caller to whom any
// failure is fatal (a benchmark, a one-plugin check).
func (l *Loaded) Err() error {
	var errs []error
	for _, f := range l.Failures {
		errs = append(errs, fmt.Errorf("plugin %s (%s): %w", f.Plugin, f.Manifest, f.Err))
	}
	return errors.Join(errs...)
}

// Close closes the registered scorers. The loaders' own resources (a WASM engine and its
// compilation cache) are their owners' to close.
func (l *Loaded) Close(ctx context.Context) error {
	var errs []error
	for _, p := range l.Plugins {
		errs = append(errs, p.Close(ctx))
	}
	return errors.Join(errs...)
}

// LoadPlugins loads the plugins whose manifests are at paths (each a manifest file, or a
// folder whose *.plugin.json files are read in name order) and registers their scorers in
// reg, in that order:
//
//  1. find the manifests; a path that does not exist, a folder without manifests, or a
//     file that is not a manifest is an error, and nothing is loaded;
//  2. read each manifest and load it with the loader of its runtime, several at once
//     (see [LoadOptions.Parallel]);
//  3. register each plugin's scorers, in the order of the manifests: a scorer named like
//     one registered already (a built-in, or one from an earlier manifest) replaces it
//     only when its manifest lists the name in "replaces" ([Registry.Replace] records
//     it), and is refused otherwise.
//
// A failure is per plugin, or per scorer at step 3: it is recorded in reg
// ([Registry.Fail], so [Registry.Lookup] says why the scorer is unavailable), logged,
// and returned in [Loaded.Failures]; the other plugins load regardless. The returned
// error is for step 1 only.
func LoadPlugins(ctx context.Context, reg *Registry, paths []string, o LoadOptions) (*Loaded, error) {
	files, err := manifestFiles(paths)
	if err != nil {
		return nil, err
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Parallel < 1 {
		o.Parallel = DefaultParallelLoads
	}
	loads := make([]manifestLoad, len(files))
	sem := make(chan struct{}, o.Parallel)
	var wg sync.WaitGroup
	for i, path := range files {
		loads[i].path = path
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			loads[i].load(ctx, o.Loaders)
		}()
	}
	wg.Wait()
	out := &Loaded{}
	fail := func(f LoadFailure) {
		reg.Fail(f)
		out.Failures = append(out.Failures, f)
		o.Logger.Warn("plugin not loaded", "plugin", f.Plugin, "manifest", f.Manifest, "error", f.Err)
	}
	for _, l := range loads {
		switch {
		case l.skipped:
			out.Skipped = append(out.Skipped, l.path)
			continue
		case l.err != nil:
			fail(l.failure(nil, l.err))
			continue
		}
		for _, p := range l.plugins {
			if err := register(reg, p, &l.m); err != nil {
				_ = p.Close(ctx)
				fail(l.failure([]string{p.Info().Name}, err))
				continue
			}
			out.Plugins = append(out.Plugins, p)
		}
	}
	return out, nil
}

// manifestLoad is one manifest's way through LoadPlugins.
type manifestLoad struct {
	path    string
	m       Manifest
	read    bool // m was read
	skipped bool
	plugins []Plugin
	err     error
}

func (l *manifestLoad) load(ctx context.Context, loaders map[string]Loader) {
	l.m, l.err = ReadManifest(l.path)
	if l.err != nil {
		return
	}
	l.read = true
	ld, ok := loaders[l.m.Runtime]
	if !ok {
		l.skipped = true
		return
	}
	l.plugins, l.err = ld.Load(ctx, l.m)
}

// failure describes the manifest's failure; scorers, when given, are the ones refused.
func (l *manifestLoad) failure(scorers []string, err error) LoadFailure {
	if !l.read {
		return LoadFailure{Plugin: strings.TrimSuffix(filepath.Base(l.path), ManifestSuffix), Manifest: l.path, Err: err}
	}
	if scorers == nil {
		scorers = l.m.Scorers
	}
	return LoadFailure{Plugin: l.m.Name, Manifest: l.path, Runtime: l.m.Runtime, Scorers: scorers, Replaces: l.m.Replaces, Err: err}
}

// register adds p to reg, replacing a registered scorer only where m opts in.
func register(reg *Registry, p Plugin, m *Manifest) error {
	name := p.Info().Name
	if !slices.Contains(reg.Names(), name) {
		return reg.Register(p, false)
	}
	if !m.MayReplace(name) {
		return fmt.Errorf("%s: %w (built in, or from another plugin); to replace it, add \"replaces\": [%q] to %s's manifest",
			name, ErrDuplicate, name, m.Name)
	}
	return reg.Replace(p, m.Name)
}

// manifestFiles expands paths into manifest files: a folder into its manifests, sorted.
func manifestFiles(paths []string) ([]string, error) {
	var out []string
	for _, path := range paths {
		fi, err := os.Stat(path)
		if err != nil {
			return nil, fmt.Errorf("load plugins: %w", err)
		}
		if !fi.IsDir() {
			if !strings.HasSuffix(path, ManifestSuffix) {
				return nil, fmt.Errorf("load plugins: %s: %w: a manifest's name ends in %s (scorekit plugin manifest writes one)", path, ErrNotManifest, ManifestSuffix)
			}
			out = append(out, path)
			continue
		}
		found, err := manifestsIn(path)
		if err != nil {
			return nil, err
		}
		out = append(out, found...)
	}
	return out, nil
}
