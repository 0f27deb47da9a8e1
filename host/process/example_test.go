package process_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/process"
	"github.com/scorekit/scorekit/sdk"
)

// Load a process plugin from its manifest (make process-plugins writes this one), register
// its scorers, and score a run through the host. Closing the plugins stops their processes.
func ExampleLoad() {
	ctx := context.Background()
	m, err := host.ReadManifest("build/process/builtin.plugin.json")
	if err != nil {
		log.Fatal(err)
	}
	plugins, err := process.Load(ctx, m, process.Options{Logger: slog.Default()})
	if err != nil {
		log.Fatal(err)
	}
	reg := host.NewRegistry()
	for _, p := range plugins {
		defer p.Close(ctx)
		if err := reg.Register(p, false); err != nil {
			log.Fatal(err)
		}
	}
	s, err := host.New(reg).Open(ctx, "prescreen", host.OpenOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close(ctx)
	res := s.Score(ctx, sdk.Run{Input: "What is the capital of France?", Output: "Paris"})
	fmt.Println(res.Status, res.Telemetry.Runtime)
}
