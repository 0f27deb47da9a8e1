package service_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/plugins/builtin"
	"github.com/scorekit/scorekit/service"
)

// A platform embeds the service: it opens it on a SQLite file with the built-in scorers,
// stores an agent's runs, evaluates them with the pre-screen and reads the results.
func Example() {
	ctx := context.Background()
	reg := host.NewRegistry()
	for _, f := range builtin.Factories() {
		if err := reg.Register(host.Native(f), false); err != nil {
			log.Fatal(err)
		}
	}
	dir, err := os.MkdirTemp("", "scorekit-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	svc, err := service.Open(ctx, service.Config{DB: filepath.Join(dir, "scorekit.db"), Host: host.New(reg), Workers: 1,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		log.Fatal(err)
	}
	defer svc.Close(ctx)

	runs := `{"id": "r1", "input": "What is the capital of France?", "output": "Paris is the capital of France."}
{"id": "r2", "input": "Summarize the contract.", "output": "Error code: 429 - Rate limit reached for requests"}
{"id": "r3", "input": "Say hi", "output": 42}
`
	imported, err := svc.ImportRuns(ctx, "", []byte(runs), service.ImportOptions{Agent: "support"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("stored", imported.Stored, "rejected", imported.Rejected)

	ev, err := svc.CreateEvaluation(ctx, "", "support", service.EvaluationRequest{Limit: 10, Scorers: []string{"prescreen"}})
	if err != nil {
		log.Fatal(err)
	}
	ev, err = svc.Evaluation(ctx, "", ev.ID, service.ReadOptions{Wait: time.Minute, Results: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ev.Status, ev.DoneResults, "of", ev.ExpectedResults)
	sort.Slice(ev.Results, func(i, j int) bool { return ev.Results[i].RunID < ev.Results[j].RunID })
	for _, r := range ev.Results {
		fmt.Println(r.RunID, r.Scorer, r.Status, "passed:", *r.Passed, r.Flags)
	}
	// Output:
	// stored 2 rejected 1
	// done 2 of 2
	// r1 prescreen scored passed: true []
	// r2 prescreen scored passed: false [error_text]
}

// The service's HTTP API, served open for one user on loopback, beside a platform's own
// routes.
func ExampleService_Handler() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "scorekit-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	reg := host.NewRegistry()
	for _, f := range builtin.Factories() {
		if err := reg.Register(host.Native(f), false); err != nil {
			log.Fatal(err)
		}
	}
	svc, err := service.Open(ctx, service.Config{DB: filepath.Join(dir, "scorekit.db"), Host: host.New(reg), Workers: -1,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		log.Fatal(err)
	}
	defer svc.Close(ctx)

	api, err := svc.Handler(service.HandlerOptions{Open: true})
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/scorekit/", http.StripPrefix("/scorekit", api))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	resp, err := http.Post(srv.URL+"/scorekit/v1/runs", "application/x-ndjson",
		strings.NewReader(`{"id": "r1", "agent": "support", "input": "q", "output": "a"}`+"\n"))
	if err != nil {
		log.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, strings.Contains(string(body), `"stored":1`))
	// Output: 200 true
}
