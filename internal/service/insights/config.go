package insights

import (
	"errors"
	"fmt"
	"slices"
)

// Levels are the two rates a measured rate is held against: a warning level and a
// critical level, both in (0, 1), the warning level below the critical one.
type Levels struct {
	// Warning is the rate whose certain excess raises a warning.
	Warning float64 `json:"warning"`
	// Critical is the rate whose certain excess raises a critical insight.
	Critical float64 `json:"critical"`
}

// Config holds the rules' parameters. The zero Config is the default; every field left zero
// takes its default (see [DefaultConfig]). A Config is a value: change a copy.
type Config struct {
	// Window is how many of the agent's latest runs an insight looks at. Optional. Default
	// is 100. The previous window (for regressions) is the Window runs before them.
	Window int `json:"window,omitempty"`
	// MinScored is how many runs a critical insight needs at least: scored runs for
	// quality and regression (in each window), runs for evaluation health. Gross failures
	// use MinGross instead. Optional. Default is 30.
	MinScored int `json:"min_scored,omitempty"`
	// MinRuns is how many runs any insight needs at least (scored runs for quality and
	// regression, runs for evaluation health). Optional. Default is 10.
	MinRuns int `json:"min_runs,omitempty"`
	// Confidence is the two-sided confidence of every interval. Optional. Default is 0.95.
	Confidence float64 `json:"confidence,omitempty"`
	// Quality are the levels of the failure rate (scored runs that did not pass). Optional.
	// Default is 10% and 20%.
	Quality Levels `json:"quality,omitzero"`
	// Regression are the levels of the rise of the failure rate and of the fall of the
	// mean score from the previous window to this one. Optional. Default is 5 and 15
	// points.
	Regression Levels `json:"regression,omitzero"`
	// Gross are the levels of the share of gross failures, measured over the newest runs
	// as well as over the window, so that a spike is caught early. Optional. Default is 2%
	// and 10%.
	Gross Levels `json:"gross,omitzero"`
	// MinGross is the fewest of the newest runs a gross-failure spike is measured over,
	// and what a critical gross-failure insight needs instead of MinScored: the lower bar
	// that lets a spike be caught within a few dozen runs. Optional. Default is 20.
	MinGross int `json:"min_gross,omitempty"`
	// GrossFlags are the flags that mark a gross failure. Optional. Default is
	// error_text, empty_output and tool_error (what prescreen raises for an error message,
	// for nothing, and for a turn whose tool calls all failed without a word).
	GrossFlags []string `json:"gross_flags,omitempty"`
	// Health are the levels of the share of results that are not scored (skipped or
	// failed). Only failed results can make it critical. Optional. Default is 20% and 50%.
	Health Levels `json:"health,omitzero"`
	// Experimental names scorers the tenant marks experimental: they raise no critical
	// insight until their current version has results for a full window. Optional.
	Experimental []string `json:"experimental,omitempty"`
	// Agreements are scorer versions' measured Cohen's kappa with the tenant's labels: a
	// version whose kappa is under MinKappa raises no critical insight (a judge that
	// disagrees with the people who label its runs is not trusted to page anyone).
	// Optional.
	Agreements []Agreement `json:"agreements,omitempty"`
	// WorstRuns is how many example runs an insight carries. Optional. Default is 5.
	WorstRuns int `json:"worst_runs,omitempty"`
}

// DefaultConfig returns the default rules: a window of 100 runs; critical insights need 30
// scored runs; 95% intervals; failure rate levels 10% / 20%; regression levels 5 / 15
// points; gross failure levels 2% / 10%; evaluation health levels 20% / 50%; five example
// runs per insight. RATIONALE.md says why.
func DefaultConfig() Config {
	return Config{
		Window:     100,
		MinScored:  30,
		MinRuns:    10,
		Confidence: 0.95,
		Quality:    Levels{Warning: 0.10, Critical: 0.20},
		Regression: Levels{Warning: 0.05, Critical: 0.15},
		Gross:      Levels{Warning: 0.02, Critical: 0.10},
		MinGross:   20,
		GrossFlags: []string{"error_text", "empty_output", "tool_error"},
		Health:     Levels{Warning: 0.20, Critical: 0.50},
		WorstRuns:  5,
	}
}

// ErrInvalidConfig is wrapped by every error [Config.Validate] returns.
var ErrInvalidConfig = errors.New("invalid insights config")

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	d := DefaultConfig()
	if c.Window == 0 {
		c.Window = d.Window
	}
	if c.MinScored == 0 {
		c.MinScored = d.MinScored
	}
	if c.MinRuns == 0 {
		c.MinRuns = d.MinRuns
	}
	if c.Confidence == 0 {
		c.Confidence = d.Confidence
	}
	if c.Quality == (Levels{}) {
		c.Quality = d.Quality
	}
	if c.Regression == (Levels{}) {
		c.Regression = d.Regression
	}
	if c.Gross == (Levels{}) {
		c.Gross = d.Gross
	}
	if c.MinGross == 0 {
		c.MinGross = d.MinGross
	}
	if c.GrossFlags == nil {
		c.GrossFlags = d.GrossFlags
	}
	if c.Health == (Levels{}) {
		c.Health = d.Health
	}
	if c.WorstRuns == 0 {
		c.WorstRuns = d.WorstRuns
	}
	return c
}

// Validate checks c after defaults; an error names the field and says what is allowed.
func (c Config) Validate() error {
	c = c.WithDefaults()
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrInvalidConfig}, a...)...)
	}
	switch {
	case c.Window < 1 || c.Window > 10000:
		return bad("window %d: want 1 to 10000 runs", c.Window)
	case c.MinRuns < 1:
		return bad("min_runs %d: want at least 1", c.MinRuns)
	case c.MinScored < c.MinRuns:
		return bad("min_scored %d: want at least min_runs (%d)", c.MinScored, c.MinRuns)
	case c.Confidence <= 0.5 || c.Confidence >= 1:
		return bad("confidence %v: want a probability between 0.5 and 1, e.g. 0.95", c.Confidence)
	case c.MinGross < c.MinRuns:
		return bad("min_gross %d: want at least min_runs (%d)", c.MinGross, c.MinRuns)
	case c.WorstRuns < 0:
		return bad("worst_runs %d: want 0 or more", c.WorstRuns)
	}
	for _, l := range []struct {
		name string
		l    Levels
	}{{"quality", c.Quality}, {"regression", c.Regression}, {"gross", c.Gross}, {"health", c.Health}} {
		if !(l.l.Warning > 0 && l.l.Warning < l.l.Critical && l.l.Critical < 1) {
			return bad("%s levels %v / %v: want 0 < warning < critical < 1", l.name, l.l.Warning, l.l.Critical)
		}
	}
	for _, f := range c.GrossFlags {
		if f == "" {
			return bad("gross_flags holds an empty flag")
		}
	}
	return nil
}

func (c Config) experimental(scorer string) bool { return slices.Contains(c.Experimental, scorer) }

// MinKappa is the Cohen's kappa with the tenant's labels under which a scorer version
// raises no critical insight: below 0.4 is "fair" agreement at best on the usual scale.
const MinKappa = 0.4

// Agreement is one scorer version's measured agreement with the tenant's labels.
type Agreement struct {
	Scorer  string  `json:"scorer"`
	Version string  `json:"version"`
	Kappa   float64 `json:"kappa"`
	// Runs is the number of labelled runs the kappa was measured on.
	Runs int `json:"runs"`
}

// lowAgreement returns the measured agreement of the scorer's version when it is under
// MinKappa.
func (c Config) lowAgreement(scorer, version string) (Agreement, bool) {
	for _, a := range c.Agreements {
		if a.Scorer == scorer && a.Version == version && a.Kappa < MinKappa {
			return a, true
		}
	}
	return Agreement{}, false
}
