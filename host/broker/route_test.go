package broker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/scorekit/scorekit/internal/judgetest"
	"github.com/scorekit/scorekit/sdk"
)

// routed returns a broker whose default endpoint is main (operator key "sk-operator",
// model judge-model) and whose endpoint "team" is team (operator key "sk-operator-team",
// models team-small and team-large).
func routed(t *testing.T, main, team *judgetest.Server, cfg Config) *Broker {
	t.Helper()
	cfg.APIKey = "sk-operator"
	cfg.Endpoints = []Endpoint{{Name: "team", BaseURL: team.URL(), Model: "team-small", Models: []string{"team-large"}, APIKey: "sk-operator-team"}}
	b, _ := newBroker(t, main, cfg)
	return b
}

func meterCall(b *Broker, tenant string, r Route, prompt string) ([]sdk.CompletionResponse, error) {
	j, finish := b.MeterJudge(WithRoute(context.Background(), r), tenant, "s")
	resp, err := j.Complete(context.Background(), ask(prompt))
	finish(&sdk.Result{Status: sdk.StatusScored})
	return resp, err
}

// A tenant with its own key for an endpoint is called there with that key and its
// model; another tenant's calls go to the operator's endpoint with the operator's key.
func TestTenantRouteAndKey(t *testing.T) {
	main := judgetest.New(judgetest.Rule{Reply: `{"score": 1}`})
	defer main.Close()
	team := judgetest.New(judgetest.Rule{Reply: `{"score": 0.5}`})
	defer team.Close()
	b := routed(t, main, team, Config{})
	const secret = "sk-tenant-a-0123456789"
	if err := b.SetTenantKey("a", "team", secret); err != nil {
		t.Fatal(err)
	}

	if resp, err := meterCall(b, "a", Route{Endpoint: "team", Model: "team-large"}, "q1"); err != nil || resp[0].Error != nil {
		t.Fatalf("a's call: %+v, %v", resp, err)
	}
	if resp, err := meterCall(b, "b", Route{}, "q1"); err != nil || resp[0].Error != nil {
		t.Fatalf("b's call: %+v, %v", resp, err)
	}
	// b on the team endpoint without a key of its own: the operator's key there.
	if resp, err := meterCall(b, "b", Route{Endpoint: "team"}, "q2"); err != nil || resp[0].Error != nil {
		t.Fatalf("b's call to team: %+v, %v", resp, err)
	}
	tr := team.Requests()
	if len(tr) != 2 || tr[0].Authorization != "Bearer "+secret || tr[0].Model != "team-large" {
		t.Fatalf("team endpoint saw %+v; want a's key and model team-large first", tr)
	}
	if tr[1].Authorization != "Bearer sk-operator-team" || tr[1].Model != "team-small" {
		t.Fatalf("b's call to team: %+v; want the operator's key there and the endpoint's model", tr[1])
	}
	mr := main.Requests()
	if len(mr) != 1 || mr[0].Authorization != "Bearer sk-operator" || mr[0].Model != "judge-model" {
		t.Fatalf("default endpoint saw %+v; want b's call with the operator's key", mr)
	}
	// A stored key is used on the default endpoint too, and removing it brings back the
	// operator's.
	if err := b.SetTenantKey("a", DefaultEndpoint, secret); err != nil {
		t.Fatal(err)
	}
	meterCall(b, "a", Route{}, "q3")
	if err := b.SetTenantKey("a", DefaultEndpoint, ""); err != nil {
		t.Fatal(err)
	}
	meterCall(b, "a", Route{}, "q4")
	mr = main.Requests()
	if len(mr) != 3 || mr[1].Authorization != "Bearer "+secret || mr[2].Authorization != "Bearer sk-operator" {
		t.Fatalf("default endpoint saw %+v; want a's key, then the operator's once removed", mr)
	}
}

// Routes the operator does not allow are refused before anything is sent, with the
// allowed ones listed.
func TestRouteDenied(t *testing.T) {
	main := judgetest.New(judgetest.Rule{Reply: `{"score": 1}`})
	defer main.Close()
	team := judgetest.New(judgetest.Rule{Reply: `{"score": 1}`})
	defer team.Close()
	b := routed(t, main, team, Config{})
	for _, tt := range []struct {
		name  string
		route Route
		req   string // a model the request names
		want  string
	}{
		{"denied: unknown endpoint", Route{Endpoint: "elsewhere"}, "", `endpoint "elsewhere" is not one the operator allows (allowed: default, team)`},
		{"denied: model not allowed there", Route{Endpoint: "team", Model: "judge-model"}, "", `model "judge-model" is not allowed on endpoint "team" (allowed: team-small, team-large)`},
		{"denied: a request's model not allowed on the route's endpoint", Route{Endpoint: "team"}, "judge-model", `model "judge-model" is not allowed on endpoint "team"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := b.CheckRoute(tt.route); tt.req == "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Fatalf("CheckRoute: %v; want %q", err, tt.want)
			}
			j, _ := b.MeterJudge(WithRoute(context.Background(), tt.route), "a", "s")
			reqs := ask("q")
			reqs[0].Model = tt.req
			resp, err := j.Complete(context.Background(), reqs)
			msg := ""
			if err != nil {
				msg = err.Error()
			} else if resp[0].Error != nil {
				msg = resp[0].Error.Message
			}
			if !strings.Contains(msg, tt.want) {
				t.Fatalf("complete: %v %+v; want %q", err, resp, tt.want)
			}
		})
	}
	if n := main.Calls() + team.Calls(); n != 0 {
		t.Fatalf("%d requests were sent for refused routes", n)
	}
	if _, err := New(Config{BaseURL: main.URL(), Model: "m", Endpoints: []Endpoint{{Name: "default", BaseURL: team.URL(), Model: "x"}}}); err == nil || !strings.Contains(err.Error(), "main judge's") {
		t.Fatalf("an endpoint named default: %v", err)
	}
}

// A tenant key that cannot be used fails the tenant's calls with the reason, and is never
// replaced by the operator's key; an endpoint that takes tenants' keys only refuses a
// tenant without one. Nothing is sent in either case.
func TestTenantKeyUnusable(t *testing.T) {
	main := judgetest.New(judgetest.Rule{Reply: `{"score": 1}`})
	defer main.Close()
	team := judgetest.New(judgetest.Rule{Reply: `{"score": 1}`})
	defer team.Close()
	b, _ := newBroker(t, main, Config{APIKey: "sk-operator", Endpoints: []Endpoint{{Name: "team", BaseURL: team.URL(), Model: "m", TenantKeyRequired: true}}})
	if err := b.SetTenantKeyUnusable("a", DefaultEndpoint, "it does not open with the operator's secret key"); err != nil {
		t.Fatal(err)
	}
	_, err := meterCall(b, "a", Route{}, "q")
	var se *sdk.Error
	if !errors.Is(err, ErrTenantKey) || !errors.As(err, &se) || se.Code != sdk.CodeUnavailable || !strings.Contains(err.Error(), "does not open with the operator's secret key") {
		t.Fatalf("a's call with an unusable key: %v; want unavailable naming the reason", err)
	}
	_, err = meterCall(b, "b", Route{Endpoint: "team"}, "q")
	if !errors.Is(err, ErrTenantKey) || !strings.Contains(err.Error(), "PUT /v1/judge/endpoints/team/key") {
		t.Fatalf("b's call to a tenant-key endpoint without a key: %v", err)
	}
	if n := main.Calls() + team.Calls(); n != 0 {
		t.Fatalf("%d requests were sent", n)
	}
	for _, bad := range []string{"sk key", "sk\nInjected: 1", "sk-\u00e9"} {
		if err := b.SetTenantKey("a", "team", bad); err == nil || strings.Contains(err.Error(), bad) {
			t.Errorf("SetTenantKey(%q): %v; want refused without repeating it", bad, err)
		}
	}
}

// An endpoint that echoes the tenant's key in its error: the key is in no message the
// broker gives (the call's error, the response's error, the log).
func TestTenantKeyNeverInMessages(t *testing.T) {
	main := judgetest.New(judgetest.Rule{Status: 401, EchoAuth: true},
		judgetest.Rule{Match: "schema", Status: 400, EchoAuth: true})
	defer main.Close()
	var logs bytes.Buffer
	b, _ := newBroker(t, main, Config{MaxRetries: -1})
	b.log = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	const secret = "sk-tenant-echoed-0123456789"
	if err := b.SetTenantKey("a", DefaultEndpoint, secret); err != nil {
		t.Fatal(err)
	}
	resp, err := meterCall(b, "a", Route{}, "q")
	if err != nil || resp[0].Error == nil {
		t.Fatalf("call: %+v, %v; want a failed response", resp, err)
	}
	if got := main.Requests(); len(got) != 1 || !strings.Contains(got[0].Authorization, secret) {
		t.Fatalf("the endpoint did not get the key: %+v", got)
	}
	if msg := resp[0].Error.Message; strings.Contains(msg, secret) || !strings.Contains(msg, "[tenant key]") {
		t.Fatalf("the error holds the key, or was not scrubbed where it was echoed: %s", msg)
	}
	if strings.Contains(logs.String(), secret) {
		t.Fatalf("the log holds the key: %s", logs.String())
	}
}

// The tenant's limits and budget hold on calls made with its own key.
func TestTenantKeyKeepsBudget(t *testing.T) {
	main := judgetest.New(judgetest.Rule{Reply: "one two three four five six seven eight nine ten"})
	defer main.Close()
	b, _ := newBroker(t, main, Config{})
	if err := b.SetTenantKey("a", DefaultEndpoint, "sk-tenant-a"); err != nil {
		t.Fatal(err)
	}
	if err := b.SetTenantLimits("a", Limits{TokenBudget: 12}); err != nil {
		t.Fatal(err)
	}
	if _, err := meterCall(b, "a", Route{}, "first question"); err != nil {
		t.Fatal(err)
	}
	_, err := meterCall(b, "a", Route{}, "second question")
	if !errors.Is(err, ErrBudgetExhausted) {
		t.Fatalf("second call over the budget with the tenant's own key: %v; want ErrBudgetExhausted", err)
	}
	if main.Calls() != 1 {
		t.Fatalf("%d calls; want the budget to stop the second", main.Calls())
	}
	if u := b.Usage("a"); u.Calls != 1 || u.Tokens() == 0 {
		t.Fatalf("usage %+v: the tenant's key's calls are not accounted to it", u)
	}
}

// The tenant's request rate holds on calls made with its own key: the second call in a
// window with room for one waits for the limiter, and a deadline shorter than that wait
// ends it with the rate named; nothing more is sent.
func TestTenantKeyKeepsRate(t *testing.T) {
	main := judgetest.New(judgetest.Rule{Reply: "ok"})
	defer main.Close()
	b, _ := newBroker(t, main, Config{})
	if err := b.SetTenantKey("a", DefaultEndpoint, "sk-tenant-a"); err != nil {
		t.Fatal(err)
	}
	if err := b.SetTenantLimits("a", Limits{RequestsPerSecond: 0.01, Burst: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := meterCall(b, "a", Route{}, "first"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	j, _ := b.MeterJudge(ctx, "a", "s")
	resp, err := j.Complete(ctx, ask("second"))
	msg := fmt.Sprint(err)
	if err == nil && len(resp) == 1 && resp[0].Error != nil {
		msg = resp[0].Error.Message
	}
	if !strings.Contains(msg, "rate limit (0.01 requests/s)") {
		t.Fatalf("second call within the rate: %v %+v; want it held by the tenant's rate", err, resp)
	}
	if main.Calls() != 1 {
		t.Fatalf("%d calls reached the endpoint; want the rate to hold the second", main.Calls())
	}
}
