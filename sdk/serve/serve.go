// Package serve turns Go scorers into a loadable plugin. A plugin's main package is:
//
//	package main
//
//	import (
//		"github.com/scorekit/scorekit/plugins/heuristic"
//		"github.com/scorekit/scorekit/sdk/serve"
//	)
//
//	// Registered during package initialization, which a WASM reactor runs in _initialize
//	// (a reactor never runs main).
//	var _ = serve.Register(heuristic.Factories()...)
//
//	func main() { serve.Main() }
//
// Built with GOOS=wasip1 GOARCH=wasm -buildmode=c-shared it is a WASM reactor speaking
// scorekit's ABI v2, batches of runs per call, and v1 (see docs/ABI.md); built natively it
// is a go-plugin process speaking gRPC. One artifact may carry several scorers; the host addresses them by name.
package serve

import (
	"fmt"

	"github.com/scorekit/scorekit/internal/abiversion"
	"github.com/scorekit/scorekit/sdk"
)

// scorers is the guest's table of scorers, and names the names registered so far. A plugin
// is one process or one WASM instance with exactly one such table, filled once before the
// host makes any call, which is why they are package variables here and nowhere else.
var (
	scorers []func() sdk.Scorer
	names   = map[string]bool{}
)

// Register adds scorer factories to the plugin. Call it from a package-level var
// declaration in the plugin's main package. It constructs each scorer once, to read its
// name, and panics on a duplicate name, which is a programming error caught the first time
// the plugin starts. A scorer whose Info leaves ABIVersion at 0 is given sdk.ABIVersion:
// it was built against this sdk.
func Register(factories ...func() sdk.Scorer) struct{} {
	for _, f := range factories {
		f = abiversion.Fill(f)
		name := f().Info().Name
		if names[name] {
			panic(fmt.Sprintf("serve: scorer %q registered twice", name))
		}
		names[name] = true
		scorers = append(scorers, f)
	}
	return struct{}{}
}

// factories returns the registered scorer factories, in registration order.
func factories() []func() sdk.Scorer { return scorers }
