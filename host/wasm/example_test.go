package wasm_test

import (
	"context"
	"fmt"
	"log"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/wasm"
	"github.com/scorekit/scorekit/sdk"
)

// Load every WASM plugin in a folder (`make wasm-plugins` builds build/wasm and
// build/wasm-c), open a scorer for a tenant and score a run.
func Example() {
	ctx := context.Background()
	engine, err := wasm.NewEngine(ctx, wasm.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer engine.Close(ctx)
	reg := host.NewRegistry()
	loaded, err := engine.LoadDir(ctx, reg, "build/wasm-c")
	if err != nil {
		log.Fatal(err)
	}
	// A plugin that fails is reported; the others load. This example needs its one.
	if err := loaded.Err(); err != nil {
		log.Fatal(err)
	}
	scorer, err := host.New(reg).Open(ctx, "c_contains", host.OpenOptions{Tenant: "acme"})
	if err != nil {
		log.Fatal(err)
	}
	defer scorer.Close(ctx)
	res := scorer.Score(ctx, sdk.Run{Input: "Capital of France?", Output: "Paris.", Expected: "paris"})
	fmt.Println(res.Status, res.Value())
}
