// Package builtin registers scorekit's built-in scorers.
package builtin

import (
	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/plugins/heuristic"
	"github.com/scorekit/scorekit/sdk"
)

// Factories returns the factories of every built-in scorer.
func Factories() []func() sdk.Scorer {
	var out []func() sdk.Scorer
	out = append(out, heuristic.Factories()...)
	return out
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
