package rubric_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/internal/buildtest"
	"github.com/scorekit/scorekit/internal/judgetest"
	"github.com/scorekit/scorekit/plugins/rubric"
	"github.com/scorekit/scorekit/sdk"
)

// runtimes loads the rubric from the builds of the built-ins that `make test-artifacts`
// makes (build/wasm, build/process), beside the native one.
func runtimes(t *testing.T) map[string]host.Plugin {
	t.Helper()
	out := map[string]host.Plugin{host.RuntimeNative: host.Native(rubric.New)}
	for _, rt := range []string{host.RuntimeWASM, host.RuntimeProcess} {
		for _, p := range buildtest.Builtins(t, rt, host.Limits{}) {
			if p.Info().Name == rubric.Name {
				out[rt] = p
			}
		}
		if out[rt] == nil {
			t.Fatalf("the %s build of the built-ins has no rubric; rebuild it with: make %s-plugins", rt, rt)
		}
	}
	return out
}

// TestRuntimes holds the WASM and process builds of the rubric to the native one, host
// pipeline and judge broker included: the same requests reach the judge (prompt, schema,
// model), and the same results come back, for choices, scales, templates, answers that
// cannot be read, a run over the prompt bound, and configs refused at Open.
func TestRuntimes(t *testing.T) {
	plugins := runtimes(t)
	ctx := context.Background()
	rules := []judgetest.Rule{
		{Match: "CASE-yes", Reply: `{"reasoning": "It answers.", "choice": "yes"}`},
		{Match: "CASE-partly", Reply: `{"reasoning": "Half of it.", "choice": "Partly"}`},
		{Match: "CASE-maybe", Reply: `{"reasoning": "Unsure.", "choice": "maybe"}`},
		{Match: "CASE-prose", Reply: `I think it is fine.`},
		{Match: "CASE-four", Reply: `{"reasoning": "Good.", "score": 4}`},
		{Match: "CASE-six", Reply: `{"reasoning": "Great.", "score": 6}`},
		{Match: "CASE-85", Reply: `{"reasoning": "Mostly.", "score": "85"}`},
	}
	tmpl := `{{.input}} | {{printf "%.20s" .output}} | {{meta "team"}} | {{range .context}}[{{.id}}] {{.text}} {{end}}| {{json .tool_calls}}`
	configs := map[string]string{
		"choices":  choicesRubric,
		"1-5":      strings.Replace(scaleRubric, `"scale"`, `"model": "team-judge", "scale"`, 1),
		"0-100":    `{"instructions": "How complete is it?", "scale": {"min": 0, "max": 100}, "reasoning": false}`,
		"template": `{"instructions": "Judge.", "choices": {"yes": 1, "no": 0}, "template": ` + quoteJSON(tmpl) + `}`,
	}
	conv := sdk.Run{Input: "CASE-yes Where is my parcel?", Output: "It left the depot [1].",
		Conversation: []sdk.Turn{{Role: "system", Content: "You are the shipping desk."}, {Role: "user", Content: "CASE-yes Where is my parcel?"}},
		ToolCalls:    []sdk.ToolCall{{ID: "c1", Name: "track", Arguments: `{"order":1234}`, Result: `{"status":"in transit"}`}},
		Context:      []sdk.Passage{{Text: "Parcel 1234 left the depot."}}, Expected: "In transit.",
		Metadata: map[string]any{"team": "shipping", "score": 1.5}}
	many := make([]sdk.Passage, 1000)
	for i := range many {
		many[i] = sdk.Passage{Text: strings.Repeat("p", 9000)}
	}
	cases := []struct {
		name, config string
		run          sdk.Run
		status       sdk.Status
	}{
		{"choice", "choices", sdk.Run{Input: "CASE-yes Is it?", Output: "Yes."}, sdk.StatusScored},
		{"choice loosely", "choices", sdk.Run{Input: "CASE-partly Is it?", Output: "Sort of."}, sdk.StatusScored},
		{"not a choice", "choices", sdk.Run{Input: "CASE-maybe Is it?", Output: "Hm."}, sdk.StatusFailed},
		{"prose", "choices", sdk.Run{Input: "CASE-prose Is it?", Output: "Hm."}, sdk.StatusFailed},
		{"default template", "choices", conv, sdk.StatusScored},
		{"1-5", "1-5", sdk.Run{Input: "CASE-four Hello", Output: "Hi there!"}, sdk.StatusScored},
		{"outside 1-5", "1-5", sdk.Run{Input: "CASE-six Hello", Output: "Hi there!"}, sdk.StatusFailed},
		{"0-100", "0-100", sdk.Run{Input: "CASE-85 Hello", Output: "Hi"}, sdk.StatusScored},
		{"template", "template", conv, sdk.StatusScored},
		{"prompt over the bound", "template", sdk.Run{Input: "CASE-yes", Output: "o", Context: many}, sdk.StatusFailed},
	}
	type outcome struct {
		result   string
		requests string
	}
	got := map[string]map[string]outcome{} // runtime -> case -> outcome
	for rt, p := range plugins {
		got[rt] = map[string]outcome{}
		for _, c := range cases {
			// A broker per case, so each request reaches the endpoint and is seen.
			b, srv := judge(t, rules...)
			reg := host.NewRegistry()
			if err := reg.Register(p, false); err != nil {
				t.Fatal(err)
			}
			s, err := host.New(reg, host.WithJudge(b)).Open(ctx, rubric.Name, host.OpenOptions{Config: json.RawMessage(configs[c.config])})
			if err != nil {
				t.Fatalf("%s %s: %v", rt, c.name, err)
			}
			res := s.Score(ctx, c.run)
			s.Close(ctx)
			if res.Status != c.status {
				t.Errorf("%s %s: %s (%+v), want %s", rt, c.name, res.Status, res.Error, c.status)
			}
			if res.Telemetry.Runtime != rt {
				t.Fatalf("%s ran in %q", rt, res.Telemetry.Runtime)
			}
			res.Telemetry = sdk.Telemetry{}
			got[rt][c.name] = outcome{result: jsonString(t, res), requests: jsonString(t, srv.Requests())}
		}
	}
	for _, c := range cases {
		want := got[host.RuntimeNative][c.name]
		for _, rt := range []string{host.RuntimeWASM, host.RuntimeProcess} {
			if g := got[rt][c.name]; g != want {
				t.Errorf("%s differs in %s:\nnative result   %s\n%-7s result   %s\nnative requests %s\n%-7s requests %s",
					c.name, rt, want.result, rt, g.result, want.requests, rt, g.requests)
			}
		}
	}
	// The team's model is the one called, from every runtime.
	for rt := range plugins {
		if !strings.Contains(got[rt]["1-5"].requests, `"Model":"team-judge"`) {
			t.Errorf("%s: the 1-5 rubric's request did not ask for team-judge: %s", rt, got[rt]["1-5"].requests)
		}
	}

	// A config the rubric refuses is an invalid config at Open in every runtime, with the
	// same words.
	bad := `{"instructions": "x", "choices": {"a": 1, "b": 0}, "template": "{{.outptu}}"}`
	var msgs []string
	for _, rt := range []string{host.RuntimeNative, host.RuntimeWASM, host.RuntimeProcess} {
		reg := host.NewRegistry()
		if err := reg.Register(plugins[rt], false); err != nil {
			t.Fatal(err)
		}
		_, err := host.New(reg).Open(ctx, rubric.Name, host.OpenOptions{Config: json.RawMessage(bad)})
		if !errors.Is(err, host.ErrInvalidConfig) || !strings.Contains(err.Error(), `rubric:1:2: unknown field "outptu" of the run`) {
			t.Errorf("%s: err %v, want an invalid config naming the field", rt, err)
			continue
		}
		msgs = append(msgs, err.Error())
	}
	t.Logf("template error as each runtime reports it:\n%s", strings.Join(msgs, "\n"))
}

func jsonString(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
