package main

import (
	"github.com/scorekit/scorekit/plugins/heuristic"
	"github.com/scorekit/scorekit/sdk/serve"
)

// Registered during package initialization, which a WASM reactor runs in _initialize
// (a reactor never runs main).
var _ = serve.Register(heuristic.Factories()...)

func main() { serve.Main() }
