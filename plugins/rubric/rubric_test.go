package rubric_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/broker"
	"github.com/scorekit/scorekit/internal/judgetest"
	"github.com/scorekit/scorekit/plugins/rubric"
	"github.com/scorekit/scorekit/sdk"
)

// A choices rubric and a scale rubric, as in docs/RUBRIC.md (internal/doctest runs the
// page's own).
const (
	choicesRubric = `{
		"instructions": "Does the reply give the customer a concrete next step? yes: a step the customer can take now; partly: a vague step; no: none.",
		"choices": {"yes": 1, "partly": 0.5, "no": 0}
	}`
	scaleRubric = `{
		"instructions": "Rate the reply's tone with customers from 1 (rude or dismissive) to 5 (warm and professional).",
		"scale": {"min": 1, "max": 5}
	}`
)

var refund = sdk.Run{Input: "I was charged twice for order 1234.", Output: "Sorry about that! I have refunded the second charge; it shows in 3-5 days."}

// judge starts a scripted judge and a broker on it that allows one model besides its own.
func judge(t *testing.T, rules ...judgetest.Rule) (*broker.Broker, *judgetest.Server) {
	t.Helper()
	srv := judgetest.New(rules...)
	t.Cleanup(srv.Close)
	b, err := broker.New(broker.Config{BaseURL: srv.URL(), Model: "judge-model", Models: []string{"team-judge"}, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b, srv
}

// open opens the native rubric with config on a host whose judge is j (none when nil).
func open(t *testing.T, j sdk.Judge, config string) (*host.Scorer, error) {
	t.Helper()
	reg := host.NewRegistry()
	if err := reg.Register(host.Native(rubric.New), false); err != nil {
		t.Fatal(err)
	}
	var opts []host.Option
	if j != nil {
		opts = append(opts, host.WithJudge(j))
	}
	s, err := host.New(reg, opts...).Open(context.Background(), rubric.Name, host.OpenOptions{Config: json.RawMessage(config)})
	if err == nil {
		t.Cleanup(func() { s.Close(context.Background()) })
	}
	return s, err
}

func mustOpen(t *testing.T, j sdk.Judge, config string) *host.Scorer {
	t.Helper()
	s, err := open(t, j, config)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestChoices: a choice is its score; a choice that is not one of them, or an answer
// that cannot be read, is failed with the reason, never a score.
func TestChoices(t *testing.T) {
	tests := []struct {
		name   string
		reply  string
		finish string
		score  float64 // -1: failed
		reason string  // in the reason or the error
	}{
		{name: "yes", reply: `{"reasoning": "It states the refund and when it lands.", "choice": "yes"}`, score: 1, reason: `the judge's verdict: "yes" (1). It states the refund`},
		{name: "partly", reply: `{"reasoning": "Vague.", "choice": "partly"}`, score: 0.5},
		{name: "no", reply: `{"reasoning": "No step.", "choice": "no"}`, score: 0},
		{name: "case and punctuation are forgiven", reply: `{"reasoning": "ok", "choice": "Partly."}`, score: 0.5},
		{name: "fenced with prose", reply: "Here is my verdict:\n```json\n{\"reasoning\": \"ok\", \"choice\": \"yes\"}\n```", score: 1},
		{name: "not a choice", reply: `{"reasoning": "hmm", "choice": "maybe"}`, score: -1, reason: `the judge chose "maybe", which is not one of the choices ("yes", "partly", "no")`},
		{name: "no choice", reply: `{"reasoning": "hmm"}`, score: -1, reason: `the judge's answer has no "choice"`},
		{name: "prose", reply: `I would say yes.`, score: -1, reason: "no JSON object in judge output"},
		{name: "truncated", reply: `{"reasoning": "It states the refund and`, finish: "length", score: -1, reason: "cut off at its token limit"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, _ := judge(t, judgetest.Rule{Reply: tc.reply, FinishReason: tc.finish})
			res := mustOpen(t, b, choicesRubric).Score(context.Background(), refund)
			checkResult(t, res, tc.score, tc.reason)
		})
	}
}

// TestScales: a score on any scale is normalized by the host, with the adjustment
// recorded; a score outside the scale, or on another scale, is failed.
func TestScales(t *testing.T) {
	tests := []struct {
		name  string
		scale string
		reply string
		score float64 // normalized; -1: failed
		why   string
	}{
		{name: "1-5 bottom", scale: `{"min": 1, "max": 5}`, reply: `{"reasoning": "rude", "score": 1}`, score: 0},
		{name: "1-5 middle", scale: `{"min": 1, "max": 5}`, reply: `{"reasoning": "flat", "score": 3}`, score: 0.5},
		{name: "1-5 four", scale: `{"min": 1, "max": 5}`, reply: `{"reasoning": "good", "score": 4}`, score: 0.75},
		{name: "1-5 top", scale: `{"min": 1, "max": 5}`, reply: `{"reasoning": "warm", "score": 5}`, score: 1},
		{name: "1-5 as text", scale: `{"min": 1, "max": 5}`, reply: `{"reasoning": "good", "score": "4"}`, score: 0.75},
		{name: "1-5 as a fraction of its top", scale: `{"min": 1, "max": 5}`, reply: `{"reasoning": "good", "score": "4/5"}`, score: 0.75},
		{name: "0-10", scale: `{"min": 0, "max": 10}`, reply: `{"reasoning": "ok", "score": 7}`, score: 0.7},
		{name: "0-100", scale: `{"min": 0, "max": 100}`, reply: `{"reasoning": "ok", "score": 85}`, score: 0.85},
		{name: "any min-max", scale: `{"min": -2, "max": 2}`, reply: `{"reasoning": "neutral", "score": 0}`, score: 0.5},
		{name: "a fraction on a fractional scale", scale: `{"min": 0, "max": 1}`, reply: `{"reasoning": "ok", "score": 0.8}`, score: 0.8},
		{name: "above the scale", scale: `{"min": 1, "max": 5}`, reply: `{"reasoning": "great", "score": 6}`, score: -1, why: "the judge's score 6 is outside the scale 1-5"},
		{name: "below the scale", scale: `{"min": 1, "max": 5}`, reply: `{"reasoning": "bad", "score": 0}`, score: -1, why: "the judge's score 0 is outside the scale 1-5"},
		{name: "a percentage on 1-5", scale: `{"min": 1, "max": 5}`, reply: `{"reasoning": "good", "score": 80}`, score: -1, why: "outside the scale 1-5"},
		{name: "another scale's fraction", scale: `{"min": 1, "max": 5}`, reply: `{"reasoning": "good", "score": "7/10"}`, score: -1, why: `the judge's score "7/10" is not on the scale 1-5`},
		{name: "not a number", scale: `{"min": 1, "max": 5}`, reply: `{"reasoning": "good", "score": "high"}`, score: -1, why: `the judge's score "high" is not a number`},
		{name: "no score", scale: `{"min": 1, "max": 5}`, reply: `{"reasoning": "good"}`, score: -1, why: `the judge's answer has no "score"`},
		{name: "unparseable", scale: `{"min": 1, "max": 5}`, reply: `{"reasoning": "good", "score": 4`, score: -1, why: "judge output truncated"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, srv := judge(t, judgetest.Rule{Reply: tc.reply})
			config := `{"instructions": "Rate the tone.", "scale": ` + tc.scale + `}`
			s := mustOpen(t, b, config)
			res := s.Score(context.Background(), refund)
			checkResult(t, res, tc.score, tc.why)
			if tc.score >= 0 && tc.score != rawOf(t, res) {
				if len(res.Adjustments) != 1 || res.Adjustments[0].Rule != host.RuleNormalizeRange || res.Adjustments[0].To != tc.score {
					t.Errorf("adjustments %+v, want one normalize_range to %v", res.Adjustments, tc.score)
				}
			}
			var sc rubric.Scale
			_ = json.Unmarshal([]byte(tc.scale), &sc)
			if got := s.Info().Range; got != (sdk.Range{Min: sc.Min, Max: sc.Max}) {
				t.Errorf("the host normalizes with %v, want the config's scale %s", got, tc.scale)
			}
			want := `"score":{"type":"number","minimum":` + num(sc.Min) + `,"maximum":` + num(sc.Max) + `}`
			if sent := string(srv.Requests()[0].Schema); !strings.Contains(sent, want) {
				t.Errorf("the answer schema sent was %s, want it to hold %s", sent, want)
			}
		})
	}
}

// rawOf is the score the judge gave, as the step recorded it.
func rawOf(t *testing.T, res sdk.Result) float64 {
	t.Helper()
	var out struct {
		Parsed struct {
			Score float64 `json:"score"`
		} `json:"parsed"`
	}
	if len(res.Steps) != 1 || json.Unmarshal(res.Steps[0].Output, &out) != nil {
		t.Fatalf("steps %+v", res.Steps)
	}
	return out.Parsed.Score
}

func num(f float64) string { b, _ := json.Marshal(f); return string(b) }

func checkResult(t *testing.T, res sdk.Result, score float64, reason string) {
	t.Helper()
	if score < 0 {
		if res.Status != sdk.StatusFailed || res.Score != nil || res.Error.Code != sdk.CodeJudgeError {
			t.Fatalf("result %+v, want failed judge_error", res)
		}
		if !strings.Contains(res.Error.Message, reason) {
			t.Fatalf("error %q, want it to say %q", res.Error.Message, reason)
		}
		if len(res.Steps) != 1 || !strings.Contains(string(res.Steps[0].Output), `"raw"`) {
			t.Fatalf("a failed answer keeps the judge's raw answer in its step: %+v", res.Steps)
		}
		return
	}
	if res.Status != sdk.StatusScored || math.Abs(*res.Score-score) > 1e-9 {
		t.Fatalf("result %+v (error %v), want scored %v", res, res.Error, score)
	}
	if !strings.Contains(res.Reason, reason) {
		t.Fatalf("reason %q, want it to say %q", res.Reason, reason)
	}
}

// TestTheConfiguredModelIsCalled: the model the config names is the one the request to
// the endpoint carries, when the host allows it; a model it does not allow is failed with
// invalid_config before anything is sent.
func TestTheConfiguredModelIsCalled(t *testing.T) {
	tests := []struct {
		name  string
		model string // in the config
		sent  string // what the endpoint was asked for; "" nothing sent
	}{
		{name: "the host's model by default", sent: "judge-model"},
		{name: "the team's model", model: "team-judge", sent: "team-judge"},
		{name: "a model the host does not allow", model: "secret-judge"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, srv := judge(t, judgetest.Rule{Reply: `{"reasoning": "fine", "choice": "yes"}`})
			config := strings.Replace(choicesRubric, `"choices"`, `"model": "`+tc.model+`", "choices"`, 1)
			if tc.model == "" {
				config = choicesRubric
			}
			res := mustOpen(t, b, config).Score(context.Background(), refund)
			if tc.sent == "" {
				if res.Status != sdk.StatusFailed || res.Error.Code != sdk.CodeInvalidConfig ||
					!strings.Contains(res.Error.Message, `model "secret-judge" is not allowed on this host (allowed: judge-model, team-judge)`) {
					t.Fatalf("result %+v, want invalid_config naming the allowed models", res)
				}
				if srv.Calls() != 0 {
					t.Fatal("a request reached the endpoint")
				}
				return
			}
			if res.Status != sdk.StatusScored {
				t.Fatalf("result %+v", res)
			}
			if got := srv.Requests()[0].Model; got != tc.sent {
				t.Fatalf("the endpoint was asked for %q, want %q", got, tc.sent)
			}
			var step struct {
				Model string `json:"model"`
			}
			_ = json.Unmarshal(res.Steps[0].Output, &step)
			if step.Model != tc.model {
				t.Errorf("step records model %q, want %q", step.Model, tc.model)
			}
		})
	}
}

// TestStructuredOutput: the rubric asks for its answer by a strict JSON schema, the
// reasoning before the verdict; an endpoint without structured output is asked for a JSON
// object instead, and the answer is read the same way.
func TestStructuredOutput(t *testing.T) {
	for _, refuse := range []bool{false, true} {
		b, srv := judge(t, judgetest.Rule{Reply: `{"reasoning": "ok", "choice": "partly"}`})
		if refuse {
			srv.RefuseSchema()
		}
		res := mustOpen(t, b, choicesRubric).Score(context.Background(), refund)
		if res.Status != sdk.StatusScored || *res.Score != 0.5 {
			t.Fatalf("refuse %v: result %+v", refuse, res)
		}
		first := srv.Requests()[0]
		want := `{"type":"object","properties":{"reasoning":{"type":"string","description":"Your reasoning, step by step, before the verdict."},"choice":{"type":"string","enum":["yes","partly","no"]}},"required":["reasoning","choice"],"additionalProperties":false}`
		if string(first.Schema) != want || !first.Strict {
			t.Fatalf("schema sent %s (strict %v), want %s", first.Schema, first.Strict, want)
		}
		if refuse {
			if n := srv.Calls(); n != 2 || !srv.Requests()[1].JSON {
				t.Fatalf("%d requests, want the refused one and a JSON object request", n)
			}
		}
	}
}

// TestReasoningOff: without reasoning the judge is asked for the verdict alone.
func TestReasoningOff(t *testing.T) {
	b, srv := judge(t, judgetest.Rule{Reply: `{"score": 2}`})
	res := mustOpen(t, b, `{"instructions": "Rate it.", "scale": {"min": 1, "max": 5}, "reasoning": false}`).Score(context.Background(), refund)
	if res.Status != sdk.StatusScored || *res.Score != 0.25 || res.Reason != "the judge's verdict: 2 on 1-5" {
		t.Fatalf("result %+v", res)
	}
	req := srv.Requests()[0]
	if strings.Contains(string(req.Schema), "reasoning") || strings.Contains(req.LastUser(), `"reasoning"`) {
		t.Fatalf("reasoning asked for: schema %s, prompt %q", req.Schema, req.LastUser())
	}
}

// TestSteps: the step records the prompt as sent, the model, the raw answer and what was
// read from it.
func TestSteps(t *testing.T) {
	b, srv := judge(t, judgetest.Rule{Reply: `{"reasoning": "warm", "score": 5}`})
	res := mustOpen(t, b, strings.Replace(scaleRubric, `"scale"`, `"model": "team-judge", "scale"`, 1)).Score(context.Background(), refund)
	if res.Status != sdk.StatusScored || len(res.Steps) != 1 {
		t.Fatalf("result %+v", res)
	}
	st := res.Steps[0]
	req := srv.Requests()[0]
	if st.Name != "judge" || st.Prompt != req.Messages[0].Content+"\n\n"+req.LastUser() {
		t.Errorf("step prompt %q is not what was sent", st.Prompt)
	}
	want := `{"model":"team-judge","parsed":{"reasoning":"warm","score":5},"raw":"{\"reasoning\": \"warm\", \"score\": 5}"}`
	if string(st.Output) != want {
		t.Errorf("step output %s, want %s", st.Output, want)
	}
	if res.Telemetry.JudgeCalls != 1 {
		t.Errorf("telemetry %+v, want the judge call counted", res.Telemetry)
	}
}

// TestPrompt: the default template shows the judge every field the run has; the prompt
// holds the criteria and asks for the answer's shape.
func TestPrompt(t *testing.T) {
	b, srv := judge(t, judgetest.Rule{Reply: `{"reasoning": "ok", "choice": "yes"}`})
	run := sdk.Run{
		Input:        "Where is my parcel?",
		Conversation: []sdk.Turn{{Role: "system", Content: "You are the shipping desk."}, {Role: "user", Content: "Where is my parcel?"}},
		Output:       "It left the depot this morning [1].",
		ToolCalls:    []sdk.ToolCall{{ID: "c1", Name: "track", Arguments: `{"order":"1234"}`, Result: `{"status":"in transit"}`}},
		Context:      []sdk.Passage{{Text: "Parcel 1234 left the depot at 08:10."}},
		Expected:     "In transit since this morning.",
	}
	res := mustOpen(t, b, choicesRubric).Score(context.Background(), run)
	if res.Status != sdk.StatusScored {
		t.Fatalf("result %+v", res)
	}
	prompt := srv.Requests()[0].LastUser()
	for _, want := range []string{
		"<criteria>\nDoes the reply give the customer a concrete next step?",
		"<purpose>\nYou are the shipping desk.\n</purpose>",
		"[system] You are the shipping desk.\n[user] Where is my parcel?\n</conversation>",
		"<context>\n[1] Parcel 1234 left the depot at 08:10.\n</context>",
		"- track({\"order\":\"1234\"}) -> {\"status\":\"in transit\"}",
		"<output>\nIt left the depot this morning [1].\n</output>",
		"<expected>\nIn transit since this morning.\n</expected>",
		`Choose exactly one of these answers: "yes", "partly", "no".`,
		`Reply with JSON only: {"reasoning": "<your reasoning, step by step, before you decide>", "choice": "<one of the choices>"}`,
	} {
		if !strings.Contains(prompt, want) {
			t.Errorf("prompt lacks %q:\n%s", want, prompt)
		}
	}
	if strings.Contains(prompt, "<input>") {
		t.Errorf("a run with a conversation shows it, not the input again:\n%s", prompt)
	}
}

// TestTemplate: a template of the team's renders the run's fields with the functions.
func TestTemplate(t *testing.T) {
	b, srv := judge(t, judgetest.Rule{Reply: `{"reasoning": "ok", "choice": "yes"}`})
	tmpl := `Q: {{.input}} A: {{.output | printf "%.5s"}} team={{meta "team"}} tier={{meta "customer" "tier"}} missing={{meta "nope"}}` +
		` n={{len .context}}{{range $i, $p := .context}} {{$i}}:{{$p.id}}={{upper $p.text}}{{end}}` +
		`{{with index .tool_calls 0}} first={{.name}}{{end}}{{if eq .agent "desk"}} desk{{end}} md={{.metadata}} calls={{json .tool_calls}}`
	config := `{"instructions": "Judge.", "choices": {"yes": 1, "no": 0}, "template": ` + quoteJSON(tmpl) + `}`
	run := sdk.Run{Agent: "desk", Input: "Hi?", Output: "Hello there", Context: []sdk.Passage{{Text: "one"}, {ID: "d2", Text: "two"}},
		ToolCalls: []sdk.ToolCall{{Name: "lookup", Arguments: "{}"}},
		Metadata:  map[string]any{"team": "support", "customer": map[string]any{"tier": "gold"}}}
	res := mustOpen(t, b, config).Score(context.Background(), run)
	if res.Status != sdk.StatusScored {
		t.Fatalf("result %+v", res)
	}
	want := `Q: Hi? A: Hello team=support tier=gold missing= n=2 0:1=ONE 1:d2=TWO first=lookup desk md={"customer":{"tier":"gold"},"team":"support"} calls=[{"arguments":"{}","id":"","name":"lookup","result":""}]`
	if prompt := srv.Requests()[0].LastUser(); !strings.Contains(prompt, want) {
		t.Fatalf("prompt:\n%s\nwant it to hold:\n%s", prompt, want)
	}
}

func quoteJSON(s string) string { b, _ := json.Marshal(s); return string(b) }

// TestConfigErrors: a config that cannot grade is refused at Open with an invalid config
// that names the field (and, for a template, the line) and the fix.
func TestConfigErrors(t *testing.T) {
	tests := []struct {
		name   string
		config string
		want   string
	}{
		{"no config", ``, `missing required field "instructions"`},
		{"empty instructions", `{"instructions": "  ", "choices": {"a": 1, "b": 0}}`, "instructions is empty"},
		{"no grading", `{"instructions": "x"}`, "want a grading by choices or a grading on a scale"},
		{"both gradings", `{"instructions": "x", "choices": {"a": 1, "b": 0}, "scale": {"min": 1, "max": 5}}`, "matches a grading by choices and a grading on a scale; want exactly one of them"},
		{"one choice", `{"instructions": "x", "choices": {"a": 1}}`, "choices"},
		{"a score above 1", `{"instructions": "x", "choices": {"a": 2, "b": 0}}`, "choices.a"},
		{"choices differing in case", `{"instructions": "x", "choices": {"Yes": 1, "yes": 0}}`, `choices "Yes" and "yes" differ only in case`},
		{"scale min above max", `{"instructions": "x", "scale": {"min": 5, "max": 1}}`, "config: scale: min 5 is not below max 1"},
		{"scale without max", `{"instructions": "x", "scale": {"min": 1}}`, `missing required field "max"`},
		{"unknown field", `{"instructions": "x", "choices": {"a": 1, "b": 0}, "temprature": 1}`, `unknown field "temprature"`},
		{"unknown template field", `{"instructions": "x", "choices": {"a": 1, "b": 0}, "template": "Q: {{.input}}\nA: {{.outptu}}"}`,
			`template: rubric:2:5: unknown field "outptu" of the run (known: agent, context, conversation, expected, input, metadata, output, purpose, tool_calls)`},
		{"unknown field of an item", `{"instructions": "x", "choices": {"a": 1, "b": 0}, "template": "{{range .context}}{{.body}}{{end}}"}`,
			`unknown field "body" of a context passage (known: id, text)`},
		{"a field of metadata", `{"instructions": "x", "choices": {"a": 1, "b": 0}, "template": "{{.metadata.team}}"}`,
			`field "team" of metadata (JSON text): it has no fields; read a key with {{meta "key"}}`},
		{"a function not offered", `{"instructions": "x", "choices": {"a": 1, "b": 0}, "template": "{{call .input}}"}`,
			`function "call" is not available in a rubric template (available: and, eq, ge, gt, index, json, le, len, lower, lt, meta, ne, not, or, printf, trim, upper)`},
		{"an unknown function", `{"instructions": "x", "choices": {"a": 1, "b": 0}, "template": "{{shout .input}}"}`, `rubric:1:2: function "shout" is not available in a rubric template`},
		{"printing a list", `{"instructions": "x", "choices": {"a": 1, "b": 0}, "template": "{{.context}}"}`, `a list of context passages is not text; print it with json, e.g. {{json .context}}`},
		{"define", `{"instructions": "x", "choices": {"a": 1, "b": 0}, "template": "{{define \"x\"}}y{{end}}{{.input}}"}`, "{{define}} and {{block}} are not available"},
		{"template", `{"instructions": "x", "choices": {"a": 1, "b": 0}, "template": "{{template \"rubric\" .}}"}`, "{{template}} is not available"},
		{"range over an integer", `{"instructions": "x", "choices": {"a": 1, "b": 0}, "template": "{{range 1000000000}}x{{end}}"}`, "range over an integer: a range goes over a list"},
		{"eq on a list", `{"instructions": "x", "choices": {"a": 1, "b": 0}, "template": "{{if eq .context .context}}x{{end}}"}`, "eq cannot compare a list of context passages"},
		{"eq of two kinds", `{"instructions": "x", "choices": {"a": 1, "b": 0}, "template": "{{if eq (len .context) \"2\"}}x{{end}}"}`, "eq compares values of one kind, got an integer and text"},
		{"index of text", `{"instructions": "x", "choices": {"a": 1, "b": 0}, "template": "{{index .input 0}}"}`, "index of text by an integer: want a list and an integer"},
		{"a parse error", `{"instructions": "x", "choices": {"a": 1, "b": 0}, "template": "{{if .input}}x"}`, "rubric:1: unexpected EOF"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := open(t, nil, tc.config)
			if err == nil || !errors.Is(err, host.ErrInvalidConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want an invalid config saying %q", err, tc.want)
			}
		})
	}
}

// TestTemplateWorkIsBounded: a template's work on a run is bounded, whatever the
// template says; a run over a bound is failed with limit_exceeded, and the same template
// scores a run within it.
func TestTemplateWorkIsBounded(t *testing.T) {
	many := make([]sdk.Passage, 1000)
	for i := range many {
		many[i] = sdk.Passage{Text: "passage"}
	}
	big := strings.Repeat("x", 100<<10)
	tests := []struct {
		name     string
		template string
		run      sdk.Run
		small    sdk.Run // the same template within bounds
		want     string
	}{
		{"prompt size", `{{range .context}}{{$.input}}{{end}}`, sdk.Run{Input: big, Output: "o", Context: many},
			sdk.Run{Input: "short", Output: "o", Context: many}, "the prompt for this run is over 8 MiB"},
		{"function work", `{{range .context}}{{if eq $.input "x"}}!{{end}}{{end}}`, sdk.Run{Input: big, Output: "o", Context: many},
			sdk.Run{Input: "short", Output: "o", Context: many}, "the template's functions handled over 64 MiB"},
		{"steps", `{{range .context}}{{range $.context}}{{range $.context}}{{end}}{{end}}{{end}}`, sdk.Run{Input: "i", Output: "o", Context: many},
			sdk.Run{Input: "i", Output: "o", Context: many[:10]}, "the template ran over 10000000 steps on this run"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, srv := judge(t, judgetest.Rule{Reply: `{"reasoning": "ok", "choice": "a"}`})
			s := mustOpen(t, b, `{"instructions": "x", "choices": {"a": 1, "b": 0}, "template": `+quoteJSON(tc.template)+`}`)
			res := s.Score(context.Background(), tc.run)
			if res.Status != sdk.StatusFailed || res.Error.Code != sdk.CodeLimitExceeded || !strings.Contains(res.Error.Message, tc.want) {
				t.Fatalf("result %+v, want limit_exceeded %q", res, tc.want)
			}
			if srv.Calls() != 0 {
				t.Fatal("the judge was called for a run over a bound")
			}
			if res := s.Score(context.Background(), tc.small); res.Status != sdk.StatusScored {
				t.Fatalf("within bounds: %+v", res)
			}
		})
	}
}

// TestTemplateRunError: a template that fails on one run (an index past the end) fails
// that run with the reason; another run scores.
func TestTemplateRunError(t *testing.T) {
	b, _ := judge(t, judgetest.Rule{Reply: `{"reasoning": "ok", "choice": "a"}`})
	s := mustOpen(t, b, `{"instructions": "x", "choices": {"a": 1, "b": 0}, "template": "{{(index .context 1).text}}"}`)
	res := s.Score(context.Background(), sdk.Run{Input: "i", Output: "o", Context: []sdk.Passage{{Text: "only one"}}})
	if res.Status != sdk.StatusFailed || res.Error.Code != sdk.CodeInvalidConfig || !strings.Contains(res.Error.Message, "<index .context 1>") || !strings.Contains(res.Error.Message, "out of range") {
		t.Fatalf("result %+v", res)
	}
	if res := s.Score(context.Background(), sdk.Run{Input: "i", Output: "o", Context: []sdk.Passage{{Text: "a"}, {Text: "b"}}}); res.Status != sdk.StatusScored {
		t.Fatalf("result %+v", res)
	}
}

// TestEveryRunGoesToTheJudge: an empty output is graded by the criteria, not floored.
func TestEveryRunGoesToTheJudge(t *testing.T) {
	b, srv := judge(t, judgetest.Rule{Reply: `{"reasoning": "silence was right", "choice": "yes"}`})
	res := mustOpen(t, b, choicesRubric).Score(context.Background(), sdk.Run{Input: "Say nothing.", Output: ""})
	if res.Status != sdk.StatusScored || *res.Score != 1 || srv.Calls() != 1 {
		t.Fatalf("result %+v, %d calls", res, srv.Calls())
	}
}

// TestNoJudge: without a judge the rubric is skipped, saying how to configure one.
func TestNoJudge(t *testing.T) {
	res := mustOpen(t, nil, choicesRubric).Score(context.Background(), refund)
	if res.Status != sdk.StatusSkipped || !strings.Contains(res.Reason, "--judge-url") {
		t.Fatalf("result %+v", res)
	}
}

// TestJudgeFailure: a judge that fails is a failed result with the judge's error code.
func TestJudgeFailure(t *testing.T) {
	b, _ := judge(t, judgetest.Rule{Status: 500})
	res := mustOpen(t, b, choicesRubric).Score(context.Background(), refund)
	if res.Status != sdk.StatusFailed || res.Error.Code != sdk.CodeJudgeError || !strings.Contains(res.Error.Message, "HTTP 500") {
		t.Fatalf("result %+v", res)
	}
}

// TestUnconfigured: the scorer used without a config says so instead of scoring.
func TestUnconfigured(t *testing.T) {
	_, err := rubric.New().Score(context.Background(), sdk.Call{Run: refund})
	var e *sdk.Error
	if !errors.As(err, &e) || e.Code != sdk.CodeInvalidConfig {
		t.Fatalf("err %v", err)
	}
}
