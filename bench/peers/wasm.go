package main

import (
	"context"
	"fmt"

	"github.com/scorekit/scorekit/host"
)

// wasmRegistry loads the heuristic WASM plugin from dir. The WASM runtime (host/wasm) is
// not part of the module yet; when it is, this loads dir with its engine and registers the
// plugins it returns.
func wasmRegistry(_ context.Context, _ *host.Registry, dir string) (*host.Registry, func(), error) {
	return nil, nil, fmt.Errorf("score: runtime wasm: not available in this build (plugins folder %q); the WASM column needs host/wasm", dir)
}
