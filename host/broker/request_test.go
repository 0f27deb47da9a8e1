package broker

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/internal/judgetest"
	"github.com/scorekit/scorekit/sdk"
)

// TestRequestModel: a request names its model; the broker sends it when the operator
// allowed it and refuses it, before anything is sent, when not.
func TestRequestModel(t *testing.T) {
	tests := []struct {
		name      string
		allowed   []string
		model     string
		wantSent  string // the model the endpoint saw; "" when nothing was sent
		wantError string
	}{
		{name: "default", model: "", wantSent: "judge-model"},
		{name: "the default by name", model: "judge-model", wantSent: "judge-model"},
		{name: "allowed", allowed: []string{"big-judge"}, model: "big-judge", wantSent: "big-judge"},
		{name: "not allowed", allowed: []string{"big-judge"}, model: "other-judge", wantError: `model "other-judge" is not allowed on this host (allowed: judge-model, big-judge)`},
		{name: "none allowed", model: "big-judge", wantError: `model "big-judge" is not allowed on this host (allowed: judge-model)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := judgetest.New(judgetest.Rule{Reply: `{"score": 1}`})
			defer srv.Close()
			b, _ := newBroker(t, srv, Config{Models: tc.allowed})
			reqs := ask("Grade this.")
			reqs[0].Model = tc.model
			out, err := b.Meter("acme", "rubric").Complete(context.Background(), reqs)
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantError != "" {
				if out[0].Error == nil || out[0].Error.Code != sdk.CodeInvalidConfig || !strings.Contains(out[0].Error.Message, tc.wantError) {
					t.Fatalf("response = %+v, want invalid_config %q", out[0], tc.wantError)
				}
				if n := srv.Calls(); n != 0 {
					t.Fatalf("%d requests reached the endpoint, want none", n)
				}
				return
			}
			if out[0].Error != nil {
				t.Fatalf("response error %v", out[0].Error)
			}
			if got := srv.Requests()[0].Model; got != tc.wantSent {
				t.Fatalf("the endpoint was asked for %q, want %q", got, tc.wantSent)
			}
		})
	}
}

// TestRequestModelIsInTheCacheKey: the same prompt to two models is two answers.
func TestRequestModelIsInTheCacheKey(t *testing.T) {
	srv := judgetest.New(judgetest.Rule{Reply: `{"score": 1}`})
	defer srv.Close()
	b, _ := newBroker(t, srv, Config{Models: []string{"big-judge"}})
	for _, model := range []string{"", "big-judge", "", "big-judge"} {
		reqs := ask("Grade this.")
		reqs[0].Model = model
		if _, err := b.Complete(context.Background(), reqs); err != nil {
			t.Fatal(err)
		}
	}
	if n := srv.Calls(); n != 2 {
		t.Fatalf("%d calls, want 2 (one per model, then cache hits)", n)
	}
}

const answerSchema = `{"type":"object","properties":{"choice":{"type":"string","enum":["yes","no"]}},"required":["choice"],"additionalProperties":false}`

func schemaReq(prompt string) []sdk.CompletionRequest {
	return []sdk.CompletionRequest{{Messages: []sdk.Message{{Role: "user", Content: prompt}}, Schema: json.RawMessage(answerSchema)}}
}

// TestStructuredOutput: a request with a schema asks for response_format json_schema,
// strict, with the schema as given.
func TestStructuredOutput(t *testing.T) {
	srv := judgetest.New(judgetest.Rule{Reply: `{"choice": "yes"}`})
	defer srv.Close()
	b, _ := newBroker(t, srv, Config{})
	out, err := b.Complete(context.Background(), schemaReq("Is it?"))
	if err != nil || out[0].Error != nil || out[0].Content != `{"choice": "yes"}` {
		t.Fatalf("out %+v, err %v", out, err)
	}
	req := srv.Requests()[0]
	if req.JSON || !req.Strict || string(req.Schema) != answerSchema {
		t.Fatalf("request: json_object %v, strict %v, schema %s; want json_schema, strict, %s", req.JSON, req.Strict, req.Schema, answerSchema)
	}
}

// TestStructuredOutputFallback: an endpoint that does not offer json_schema is asked for a
// JSON object instead, in the same attempt, and from then on from the start; the
// scorer gets its answer and the refusal costs no failure in the accounting.
func TestStructuredOutputFallback(t *testing.T) {
	srv := judgetest.New(judgetest.Rule{Reply: `{"choice": "no"}`})
	defer srv.Close()
	srv.RefuseSchema()
	b, _ := newBroker(t, srv, Config{})
	m := b.Meter("acme", "rubric")
	for _, prompt := range []string{"first?", "second?"} {
		out, err := m.Complete(context.Background(), schemaReq(prompt))
		if err != nil || out[0].Error != nil || out[0].Content != `{"choice": "no"}` {
			t.Fatalf("%s: out %+v, err %v", prompt, out, err)
		}
	}
	var kinds []string
	for _, r := range srv.Requests() {
		kind := "text"
		switch {
		case r.Schema != nil:
			kind = "schema"
		case r.JSON:
			kind = "json"
		}
		kinds = append(kinds, r.LastUser()+kind)
	}
	if got, want := strings.Join(kinds, " "), "first?schema first?json second?json"; got != want {
		t.Fatalf("requests %s, want %s", got, want)
	}
	if u := m.Usage(); u.Calls != 2 || u.Failures != 0 || u.Retries != 0 {
		t.Fatalf("usage %+v, want 2 calls and no failure", u)
	}
}

// TestSchemaMustBeAnObject: a schema that is not a JSON object is refused before sending.
func TestSchemaMustBeAnObject(t *testing.T) {
	srv := judgetest.New(judgetest.Rule{Reply: `{}`})
	defer srv.Close()
	b, _ := newBroker(t, srv, Config{})
	reqs := schemaReq("x")
	reqs[0].Schema = json.RawMessage(`["not", "an", "object"]`)
	out, err := b.Complete(context.Background(), reqs)
	if err != nil || out[0].Error == nil || !strings.Contains(out[0].Error.Message, "schema is not a JSON object") {
		t.Fatalf("out %+v, err %v", out, err)
	}
	if srv.Calls() != 0 {
		t.Fatal("the request was sent")
	}
}
