// Command plugin is every built-in scorer as one loadable plugin: a WASM reactor when built
// with GOOS=wasip1 GOARCH=wasm -buildmode=c-shared (make wasm-plugins), a go-plugin process
// when built natively (make process-plugins). scorekit score --runtime wasm|process loads it.
package main

import (
	"github.com/scorekit/scorekit/plugins/builtin"
	"github.com/scorekit/scorekit/sdk/serve"
)

// Registered during package initialization, which a WASM reactor runs in _initialize
// (a reactor never runs main).
var _ = serve.Register(builtin.Factories()...)

func main() { serve.Main() }
