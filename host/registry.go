package host

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/scorekit/scorekit/sdk"
)

// Registry maps scorer names to plugins, and remembers the plugins that failed to load
// and the scorers a plugin replaced. It is a value: a program may hold several. It is not
// safe for concurrent registration; register before serving.
type Registry struct {
	plugins  map[string]Plugin
	replaced map[string]string // scorer name -> the plugin that replaced it
	failures []LoadFailure
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{plugins: map[string]Plugin{}, replaced: map[string]string{}}
}

var namePattern = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)

// Register adds p under its Info().Name. A second plugin with the same name replaces the
// first only if replace is true; otherwise it is an error. Loaders of untrusted plugins
// use [Registry.Replace], which records the replacement.
func (r *Registry) Register(p Plugin, replace bool) error {
	info := p.Info()
	if err := checkName(info); err != nil {
		return err
	}
	if _, dup := r.plugins[info.Name]; dup && !replace {
		return fmt.Errorf("register %s: %w", info.Name, ErrDuplicate)
	}
	r.plugins[info.Name] = p
	return nil
}

// Replace registers p in place of the scorer of the same name, recording that plugin
// (a manifest name) replaced it: [Registry.Replaced] and every result's
// Telemetry.Replaced say so. There must be a scorer to replace.
func (r *Registry) Replace(p Plugin, plugin string) error {
	info := p.Info()
	if err := checkName(info); err != nil {
		return err
	}
	if _, ok := r.plugins[info.Name]; !ok {
		return fmt.Errorf("replace %s: %w: there is no scorer of that name to replace", info.Name, ErrUnknownScorer)
	}
	r.plugins[info.Name] = p
	r.replaced[info.Name] = plugin
	return nil
}

// Replaced returns the plugin that replaced the scorer called name, if one did.
func (r *Registry) Replaced(name string) (plugin string, ok bool) {
	plugin, ok = r.replaced[name]
	return plugin, ok
}

func checkName(info sdk.Info) error {
	if !namePattern.MatchString(info.Name) {
		return fmt.Errorf("register: scorer name %q: want lower case letters, digits, '_' or '-', starting with a letter", info.Name)
	}
	if err := checkABI(info); err != nil {
		return fmt.Errorf("register %s: %w", info.Name, err)
	}
	return nil
}

// checkABI checks that a scorer speaks the host's contract version. A missing version (0)
// gets a message that says how to declare it; another version wraps [ErrABIMismatch].
func checkABI(info sdk.Info) error {
	switch info.ABIVersion {
	case sdk.ABIVersion:
		return nil
	case 0:
		return fmt.Errorf("%w: its Info declares no ABIVersion; set ABIVersion: sdk.ABIVersion in the Info it returns, "+
			"or register it with serve.Register, which fills it in (a scorer not written in Go writes \"abi_version\": %d, see docs/ABI.md)",
			ErrABIMismatch, sdk.ABIVersion)
	}
	return fmt.Errorf("%w: scorer built for ABI v%d, host speaks v%d; rebuild the scorer against this sdk", ErrABIMismatch, info.ABIVersion, sdk.ABIVersion)
}

// LoadFailure is a plugin, or one scorer of a plugin, that could not be loaded. The other
// plugins load regardless; a scorer it would have provided is unavailable.
type LoadFailure struct {
	// Plugin is the manifest's name, or the manifest's file name when it could not be read.
	Plugin string
	// Manifest is the manifest's path.
	Manifest string
	// Runtime is the manifest's runtime, when it was read.
	Runtime string
	// Scorers names the scorers that are unavailable because of the failure: the one
	// refused, or those the manifest declares; empty when the manifest names none.
	Scorers []string
	// Replaces is the manifest's opt-in to replace registered scorers.
	Replaces []string
	// Err says what went wrong and how to fix it.
	Err error
}

// Fail records a plugin that failed to load.
func (r *Registry) Fail(f LoadFailure) { r.failures = append(r.failures, f) }

// Failures returns the plugins that failed to load, in the order they failed.
func (r *Registry) Failures() []LoadFailure { return slices.Clone(r.failures) }

// Lookup returns the plugin called name. A scorer that a failed plugin was to provide is
// unavailable (an error wrapping [ErrUnavailable] that says why) when nothing provides
// it, or when the failed plugin was to replace the registered one: running the scorer it
// meant to replace would hide the failure.
func (r *Registry) Lookup(name string) (Plugin, error) {
	p, ok := r.plugins[name]
	for _, f := range r.failures {
		if slices.Contains(f.Scorers, name) && (!ok || slices.Contains(f.Replaces, name)) {
			return nil, fmt.Errorf("%w: scorer %q: plugin %s (%s) failed to load: %w", ErrUnavailable, name, f.Plugin, f.Manifest, f.Err)
		}
	}
	if !ok {
		msg := fmt.Sprintf("%q (known: %v)", name, r.Names())
		var unnamed []string
		for _, f := range r.failures {
			if len(f.Scorers) == 0 {
				unnamed = append(unnamed, fmt.Sprintf("%s (%v)", f.Plugin, f.Err))
			}
		}
		if len(unnamed) > 0 {
			msg += "; plugins that failed to load, which may have provided it: " + strings.Join(unnamed, "; ")
		}
		return nil, fmt.Errorf("%w: %s", ErrUnknownScorer, msg)
	}
	return p, nil
}

// Names lists the registered scorers, sorted.
func (r *Registry) Names() []string {
	out := make([]string, 0, len(r.plugins))
	for n := range r.plugins {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
