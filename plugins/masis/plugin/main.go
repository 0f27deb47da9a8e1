// Command plugin serves the MASIS evaluator as a plugin: a WASM reactor when built with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o masis.wasm ./plugins/masis/plugin
//
// and a go-plugin process otherwise (go build -o masis ./plugins/masis/plugin).
package main

import (
	"github.com/scorekit/scorekit/plugins/masis"
	"github.com/scorekit/scorekit/sdk/serve"
)

// Registered during package initialization, which a WASM reactor runs in _initialize
// (a reactor never runs main).
var _ = serve.Register(masis.New)

func main() { serve.Main() }
