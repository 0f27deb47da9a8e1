package relevancy_test

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/broker"
	"github.com/scorekit/scorekit/internal/judgetest"
	"github.com/scorekit/scorekit/plugins/relevancy"
	"github.com/scorekit/scorekit/sdk"
	"github.com/scorekit/scorekit/sdk/verdict"
)

// setup returns a broker against srv and the relevancy scorer opened through a host that
// uses judge (the broker itself when judge is nil).
func setup(t testing.TB, srv *judgetest.Server, config string, judge func(*broker.Broker) sdk.Judge) (*broker.Broker, *host.Scorer) {
	t.Helper()
	b, err := broker.New(broker.Config{BaseURL: srv.URL(), Model: "judge", EmbeddingModel: "embed", BackoffBase: 1e6})
	if err != nil {
		t.Fatal(err)
	}
	var j sdk.Judge = b
	if judge != nil {
		j = judge(b)
	}
	return b, open(t, config, host.WithJudge(j))
}

func open(t testing.TB, config string, opts ...host.Option) *host.Scorer {
	t.Helper()
	reg := host.NewRegistry()
	if err := reg.Register(host.Native(relevancy.New), false); err != nil {
		t.Fatal(err)
	}
	var raw json.RawMessage
	if config != "" {
		raw = json.RawMessage(config)
	}
	s, err := host.New(reg, opts...).Open(context.Background(), relevancy.Name, host.OpenOptions{Config: raw})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	return s
}

var paris = sdk.Run{Input: "What is the capital of France?", Output: "Paris"}

func TestJudgeModeReadsWhatJudgesReturn(t *testing.T) {
	tests := []struct {
		name    string
		reply   string
		want    float64
		percent bool // read on a 0-100 scale: flagged percentage_scale
	}{
		{"score 1", `{"score": 1}`, 1, false},
		{"score as the string 100", `{"score": "100", "reasoning": "answers it"}`, 1, true},
		{"bare 100", `"100"`, 1, true},
		{"fenced 95 with prose", "Here is my verdict:\n```json\n{\"score\": 95, \"reasoning\": \"direct answer\"}\n```", 0.95, true},
		{"a stated percent is no guess", `{"score": "95%"}`, 0.95, false},
		{"reasoning first, trailing comma", `{"reasoning": "it answers", "score": 0.8,}`, 0.8, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := judgetest.New(judgetest.Rule{Reply: tt.reply})
			defer srv.Close()
			_, s := setup(t, srv, "", nil)
			res := s.Score(context.Background(), paris)
			if res.Status != sdk.StatusScored || res.Score == nil || math.Abs(*res.Score-tt.want) > 1e-9 {
				t.Fatalf("result = %s %v (%v)", res.Status, res.Score, res.Error)
			}
			if res.HasFlag(verdict.FlagPercentageScale) != tt.percent {
				t.Errorf("flags %v, want percentage_scale %v", res.Flags, tt.percent)
			}
			if srv.Calls() != 1 || res.Telemetry.JudgeCalls != 1 {
				t.Fatalf("judge calls: server %d, telemetry %d; want exactly 1", srv.Calls(), res.Telemetry.JudgeCalls)
			}
			if len(res.Steps) != 1 || res.Steps[0].Name != "judge" || !strings.Contains(res.Steps[0].Prompt, "<output>\nParis\n</output>") {
				t.Fatalf("steps = %+v", res.Steps)
			}
		})
	}
}

func TestJudgeFailuresAreFailedNotZero(t *testing.T) {
	tests := []struct {
		name     string
		rule     judgetest.Rule
		wantCode string
		wantMsg  string
	}{
		{"judge 500", judgetest.Rule{Status: 500}, sdk.CodeJudgeError, "HTTP 500"},
		{"judge 400", judgetest.Rule{Status: 400}, sdk.CodeJudgeError, "HTTP 400"},
		{"truncated answer", judgetest.Rule{Reply: `{"reasoning": "The output answers the question dire`, FinishReason: "length"}, sdk.CodeJudgeError, `The output answers the question dire`},
		{"prose without a score", judgetest.Rule{Reply: "The answer looks relevant to me."}, sdk.CodeJudgeError, "looks relevant to me"},
		{"ambiguous scale", judgetest.Rule{Reply: `{"score": 7}`}, sdk.CodeJudgeError, `{"score": 7}`},
		{"missing score", judgetest.Rule{Reply: `{"reasoning": "fine"}`}, sdk.CodeJudgeError, "no score"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := judgetest.New(tt.rule)
			defer srv.Close()
			_, s := setup(t, srv, `{"mode": "judge"}`, nil)
			res := s.Score(context.Background(), paris)
			if res.Status != sdk.StatusFailed || res.Score != nil {
				t.Fatalf("result = %s %v, want failed without a score", res.Status, res.Score)
			}
			if res.Error.Code != tt.wantCode || !strings.Contains(res.Error.Message, tt.wantMsg) {
				t.Fatalf("error = %v, want %s containing %q", res.Error, tt.wantCode, tt.wantMsg)
			}
		})
	}
}

func TestRateLimitedJudgeIsRetried(t *testing.T) {
	srv := judgetest.New(judgetest.Rule{Status: 429, RetryAfter: "0.01", Times: 1}, judgetest.Rule{Reply: `{"score": 1}`})
	defer srv.Close()
	var meter *broker.Meter
	b, s := setup(t, srv, "", func(b *broker.Broker) sdk.Judge {
		meter = b.Meter("acme", relevancy.Name)
		return meter
	})
	res := s.Score(context.Background(), paris)
	if res.Status != sdk.StatusScored || *res.Score != 1 {
		t.Fatalf("result = %s %v (%v)", res.Status, res.Score, res.Error)
	}
	meter.Record(&res.Telemetry)
	if res.Telemetry.Retries != 1 || res.Telemetry.JudgeCalls != 1 || srv.Calls() != 2 {
		t.Fatalf("telemetry = %+v, server %d requests; want 1 call, 1 retry", res.Telemetry, srv.Calls())
	}
	if u := b.ScorerUsage("acme", relevancy.Name); u.Retries != 1 {
		t.Fatalf("tenant accounting = %+v", u)
	}
}

func TestRescoringADatasetMakesNoCalls(t *testing.T) {
	for _, mode := range []string{"judge", "statements", "questions"} {
		t.Run(mode, func(t *testing.T) {
			srv := judgetest.New(
				judgetest.Rule{Match: "Break the text below", Reply: `{"statements": ["one"]}`},
				judgetest.Rule{Match: "Judge how relevant", Reply: `{"results": [{"result": "yes", "reason": "r"}]}`},
				judgetest.Rule{Match: "Explain the relevancy", Reply: `{"reason": "The score is 1 because it answers."}`},
				judgetest.Rule{Match: "Write the question", Reply: `{"question": "What is it?", "noncommittal": 0}`},
				judgetest.Rule{Reply: `{"score": 0.9}`},
			)
			defer srv.Close()
			_, s := setup(t, srv, `{"mode": "`+mode+`"}`, nil)
			dataset := []sdk.Run{
				paris,
				{Input: "Translate 'hello' to French.", Output: "Bonjour"},
				{Input: "Book a table for two at 8pm.", Output: "Booked: table for two at 8pm at Chez Marie."},
			}
			first := make([]sdk.Result, len(dataset))
			for i, run := range dataset {
				first[i] = s.Score(context.Background(), run)
				if first[i].Status != sdk.StatusScored {
					t.Fatalf("run %d: %s %v", i, first[i].Status, first[i].Error)
				}
			}
			calls := srv.Calls()
			for i, run := range dataset {
				res := s.Score(context.Background(), run)
				if *res.Score != *first[i].Score || res.Telemetry.JudgeCalls != 0 || res.Telemetry.CacheHits == 0 {
					t.Fatalf("run %d rescored: %v, telemetry %+v; first %v", i, *res.Score, res.Telemetry, *first[i].Score)
				}
			}
			if srv.Calls() != calls {
				t.Fatalf("re-scoring made %d calls", srv.Calls()-calls)
			}
		})
	}
}

func TestPromptsPutTheQuestionBeforeTheAnswer(t *testing.T) {
	run := sdk.Run{
		Input:    "Subject: double charge. Hi, I was charged twice for order 1234, please refund one.",
		Output:   "Billing / refund request, P2: customer double-charged on order 1234, wants one charge refunded.",
		Metadata: map[string]any{"purpose": "Triage support email into a Slack summary with category and priority."},
	}
	for _, mode := range []string{"judge", "statements"} {
		t.Run(mode, func(t *testing.T) {
			srv := judgetest.New(
				judgetest.Rule{Match: "Break the text below", Reply: `{"statements": ["Billing / refund request, P2", "customer double-charged on order 1234"]}`},
				judgetest.Rule{Match: "Judge how relevant", Reply: `{"results": [{"result": "yes", "reason": "r"}, {"result": "yes", "reason": "r"}]}`},
				judgetest.Rule{Match: "Explain the relevancy", Reply: `{"reason": "The score is 1 because it triages the email."}`},
				judgetest.Rule{Reply: `{"score": 1, "reasoning": "a correct triage"}`},
			)
			defer srv.Close()
			_, s := setup(t, srv, `{"mode": "`+mode+`"}`, nil)
			res := s.Score(context.Background(), run)
			if res.Status != sdk.StatusScored {
				t.Fatalf("%s %v", res.Status, res.Error)
			}
			checked := 0
			for _, req := range srv.Requests() {
				p := req.LastUser()
				in, out := strings.Index(p, run.Input), strings.Index(p, run.Output)
				if in < 0 {
					continue // the extract step sees only the output
				}
				checked++
				if out >= 0 && in > out {
					t.Errorf("prompt has the answer before the question:\n%s", p)
				}
			}
			if checked == 0 {
				t.Fatal("no prompt carried the input")
			}
			if mode == "judge" {
				p := srv.Requests()[0].LastUser()
				if !strings.Contains(p, run.Purpose()) || strings.Index(p, run.Purpose()) > strings.Index(p, run.Input) {
					t.Errorf("judge prompt lacks the purpose before the input:\n%s", p)
				}
				for _, must := range []string{"not word overlap", "Paris", "triage", "Cancel my 3pm meeting", `"score"`, `"reasoning"`} {
					if !strings.Contains(p, must) {
						t.Errorf("judge prompt lacks %q", must)
					}
				}
			}
		})
	}
}

func TestWithoutAJudgeRelevancyIsSkipped(t *testing.T) {
	s := open(t, "")
	res := s.Score(context.Background(), paris)
	if res.Status != sdk.StatusSkipped || res.Score != nil || !strings.Contains(res.Reason, "--judge-url") {
		t.Fatalf("result = %s %v %q", res.Status, res.Score, res.Reason)
	}
}

func TestEmptyOutputScoresZeroWithoutACall(t *testing.T) {
	srv := judgetest.New(judgetest.Rule{Reply: `{"score": 1}`})
	defer srv.Close()
	_, s := setup(t, srv, "", nil)
	res := s.Score(context.Background(), sdk.Run{Input: "What is the capital of France?", Output: "  \n"})
	if res.Status != sdk.StatusScored || *res.Score != 0 || !res.HasFlag(relevancy.FlagEmptyOutput) || srv.Calls() != 0 {
		t.Fatalf("result = %s %v %v, %d calls", res.Status, res.Score, res.Flags, srv.Calls())
	}
}

// TestErrorOutputScoresZeroWithoutACall: an error in place of an answer is 0 in every mode
// without a judge call; an answer that only talks about an error is judged.
func TestErrorOutputScoresZeroWithoutACall(t *testing.T) {
	cases := []struct {
		name, input, output string
		wantFlag            bool
	}{
		{"upstream error", "Summarize the attached contract.", "ERROR: upstream timeout", true},
		{"provider failure", "What is the capital of France?", "Error code: 429 - Rate limit reached for requests", true},
		{"an answer about the user's traceback", "My script prints 'Traceback (most recent call last)' and a KeyError. Why?",
			"The traceback (most recent call last) ends in a KeyError: the dict has no key 'x', so check it with 'x' in d first.", false},
	}
	for _, mode := range []string{"", `{"mode": "statements"}`, `{"mode": "questions"}`} {
		for _, c := range cases {
			t.Run(mode+" "+c.name, func(t *testing.T) {
				srv := judgetest.New(judgetest.Rule{Reply: `{"score": 1, "reasoning": "it answers"}`})
				defer srv.Close()
				_, s := setup(t, srv, mode, nil)
				res := s.Score(context.Background(), sdk.Run{Input: c.input, Output: c.output})
				if !c.wantFlag {
					if srv.Calls() == 0 || res.HasFlag(relevancy.FlagErrorText) {
						t.Fatalf("an answer about an error was not judged: %d calls, flags %v", srv.Calls(), res.Flags)
					}
					return
				}
				if res.Status != sdk.StatusScored || *res.Score != 0 || *res.Passed || !res.HasFlag(relevancy.FlagErrorText) || srv.Calls() != 0 {
					t.Fatalf("result = %s %v %v, %d calls; want scored 0 flagged error_text with no call", res.Status, res.Score, res.Flags, srv.Calls())
				}
			})
		}
	}
}

func TestConfigIsValidated(t *testing.T) {
	tests := []struct {
		name   string
		config string
		want   string
	}{
		{"unknown mode", `{"mode": "reverse"}`, "mode"},
		{"weight above 1", `{"uncertainty_weight": 2}`, "uncertainty_weight"},
		{"zero questions", `{"questions": 0}`, "questions"},
		{"unknown field", `{"scale": 10}`, "scale"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := host.NewRegistry()
			if err := reg.Register(host.Native(relevancy.New), false); err != nil {
				t.Fatal(err)
			}
			_, err := host.New(reg).Open(context.Background(), relevancy.Name, host.OpenOptions{Config: json.RawMessage(tt.config)})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one naming %q", err, tt.want)
			}
			// The scorer checks on its own too, for use without a host.
			c := relevancy.New().(sdk.Configurer)
			if err := c.Configure(json.RawMessage(tt.config)); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Configure err = %v, want one naming %q", err, tt.want)
			}
		})
	}
}

// withBroker is a host option with a broker against srv that has no embedding model.
func withBroker(t testing.TB, srv *judgetest.Server) host.Option {
	t.Helper()
	b, err := broker.New(broker.Config{BaseURL: srv.URL(), Model: "judge"})
	if err != nil {
		t.Fatal(err)
	}
	return host.WithJudge(b)
}

// TestToolTurnsAreJudgedOnWhatTheyDid: the seed's action-only turn reaches the judge with
// its call and result in the prompt, and is graded on them (it used to score 0 without a
// call, as empty); a turn with calls and an answer shows both; a turn whose only calls all
// failed is 0 without a call (tool_error); the text-comparing modes skip an action-only
// turn rather than score it 0.
func TestToolTurnsAreJudgedOnWhatTheyDid(t *testing.T) {
	// Dataset lines, so the runs reach the scorer as agents log them.
	var seed, answered, failed sdk.Run
	for _, c := range []struct {
		run  *sdk.Run
		line string
	}{
		{&seed, `{"id":"t1","input":"Cancel my 3pm meeting","output":[
		  {"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"cancel_event","arguments":"{\"time\":\"15:00\"}"}}]},
		  {"role":"tool","tool_call_id":"c1","content":"{\"cancelled\":true}"}]}`},
		{&answered, `{"input":"What's the weather in Lyon?","output":[
		  {"role":"assistant","tool_calls":[{"id":"c1","name":"get_weather","arguments":{"city":"Lyon"}}]},
		  {"role":"tool","tool_call_id":"c1","content":"{\"temp_c\":21,\"sky\":\"clear\"}"},
		  {"role":"assistant","content":"It is 21 °C and clear in Lyon."}]}`},
		{&failed, `{"input":"Cancel my 3pm meeting","output":[
		  {"role":"assistant","tool_calls":[{"id":"c1","name":"cancel_event","arguments":{"time":"15:00"}}]},
		  {"role":"tool","tool_call_id":"c1","content":"{\"error\":\"calendar service unavailable\"}"}]}`},
	} {
		r, err := host.DecodeRun([]byte(c.line))
		if err != nil {
			t.Fatal(err)
		}
		*c.run = r
	}

	srv := judgetest.New(
		judgetest.Rule{Match: "1. cancel_event(", Reply: `{"score": 1, "reasoning": "the meeting was cancelled through the calendar tool"}`},
		judgetest.Rule{Reply: `{"score": 0.9, "reasoning": "answers with the looked-up weather"}`},
	)
	defer srv.Close()
	_, s := setup(t, srv, "", nil)
	ctx := context.Background()

	res := s.Score(ctx, seed)
	if res.Status != sdk.StatusScored || *res.Score != 1 || len(res.Flags) != 0 || srv.Calls() != 1 {
		t.Fatalf("the seed's turn: %s %v %v %q, %d calls; want the judge's 1", res.Status, res.Value(), res.Flags, res.Reason, srv.Calls())
	}
	p := srv.Requests()[0].LastUser()
	for _, must := range []string{`1. cancel_event({"time":"15:00"})`, `result: {"cancelled":true}`, "answered through its actions alone", "completes the requested action"} {
		if !strings.Contains(p, must) {
			t.Errorf("judge prompt lacks %q:\n%s", must, p)
		}
	}
	if strings.Index(p, "<input>") > strings.Index(p, "<actions>") || strings.Index(p, "<actions>") > strings.Index(p, "<output>") {
		t.Errorf("judge prompt: want input, actions, output in that order:\n%s", p)
	}

	res = s.Score(ctx, answered)
	if res.Status != sdk.StatusScored || *res.Score != 0.9 {
		t.Fatalf("calls and an answer: %s %v %q", res.Status, res.Value(), res.Reason)
	}
	p = srv.Requests()[1].LastUser()
	if !strings.Contains(p, `get_weather({"city":"Lyon"})`) || !strings.Contains(p, `{"temp_c":21,"sky":"clear"}`) || !strings.Contains(p, "It is 21 °C and clear in Lyon.") {
		t.Errorf("judge prompt lacks the call, its result or the answer:\n%s", p)
	}

	res = s.Score(ctx, failed)
	if res.Status != sdk.StatusScored || *res.Score != 0 || !res.HasFlag(relevancy.FlagToolError) || srv.Calls() != 2 {
		t.Fatalf("failed calls, nothing said: %s %v %v, %d calls; want 0, tool_error, no call", res.Status, res.Value(), res.Flags, srv.Calls())
	}

	for _, mode := range []string{"statements", "questions"} {
		s := open(t, `{"mode": "`+mode+`"}`, withBroker(t, srv))
		if res := s.Score(ctx, seed); res.Status != sdk.StatusSkipped || !strings.Contains(res.Reason, "judge mode") {
			t.Errorf("%s mode, the seed's turn: %s %v %q; want skipped, pointing at judge mode", mode, res.Status, res.Value(), res.Reason)
		}
	}
	if srv.Calls() != 2 {
		t.Errorf("%d judge calls, want 2: skipped modes ask nothing", srv.Calls())
	}
}
