// Package builtin registers scorekit's built-in scorers.
package builtin

import (
	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/plugins/contextprecision"
	"github.com/scorekit/scorekit/plugins/heuristic"
	"github.com/scorekit/scorekit/plugins/masis"
	"github.com/scorekit/scorekit/plugins/relevancy"
	"github.com/scorekit/scorekit/sdk"
)

// Factories returns the factories of every built-in scorer: the heuristic scorers, which
// need no LLM, then the judge scorers.
func Factories() []func() sdk.Scorer {
	out := append([]func() sdk.Scorer{}, heuristic.Factories()...)
	return append(out, relevancy.New, contextprecision.New, masis.New)
}

// RegisterNative registers every built-in scorer in reg, running in the host's process.
func RegisterNative(reg *host.Registry) error {
	for _, f := range Factories() {
		if err := reg.Register(host.Native(f), false); err != nil {
			return err
		}
	}
	return nil
}
