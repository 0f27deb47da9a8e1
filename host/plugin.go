package host

import (
	"context"
	"encoding/json"

	"github.com/scorekit/scorekit/sdk"
)

// Runtime names where a scorer runs.
const (
	RuntimeNative  = "native"
	RuntimeWASM    = "wasm"
	RuntimeProcess = "process"
)

// Plugin is a loadable scorer in some runtime: a Go factory (native), a compiled WASM
// module, or a plugin executable. It is shared by tenants; what it opens is not.
type Plugin interface {
	// Info describes the scorer, as the scorer declared it.
	Info() sdk.Info
	// Runtime is RuntimeNative, RuntimeWASM or RuntimeProcess.
	Runtime() string
	// Open returns a backend for one tenant, configured with config (already validated
	// against Info.ConfigSchema and merged over Info.Defaults by the host).
	Open(ctx context.Context, tenant string, config json.RawMessage) (Backend, error)
	// Close releases what the plugin holds (compiled code, processes).
	Close(ctx context.Context) error
}

// Backend is a configured scorer for one tenant. The host runs its pipeline around it:
// Score returns the scorer's raw result, before validation and normalization.
type Backend interface {
	// Score grades run. judge is nil when no judge is available to this scorer. An error
	// means the call could not complete (trap, crash, deadline); the host turns it into a
	// failed result, using the code of an *sdk.Error when it is one.
	Score(ctx context.Context, run *sdk.Run, judge sdk.Judge) (sdk.Result, error)
	// Close releases the backend's instances.
	Close(ctx context.Context) error
}
