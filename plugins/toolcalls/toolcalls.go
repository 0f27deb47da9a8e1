// Package toolcalls is the tool_calls scorer: did the agent call the tools it should have,
// in the order it should have, with the right arguments? It needs no LLM and gives the
// same result in every runtime.
//
// The expected calls come from the run (expected_tool_calls) or, for runs that carry none,
// from the config's "expected". Each names a tool and may say what its arguments must be:
// an object whose fields the call's arguments must hold with equal values (fields it does
// not name may hold anything; nested objects match the same way, arrays element by
// element), a JSON Schema they must satisfy (the draft-07 subset json_valid enforces), or
// both. Each expected call is matched with
// at most one call of the run, and each call with at most one expected call, so that as
// many expected calls as possible are matched; with "order" they must be matched in the
// order listed (other calls may come between them).
//
// The score is the share of expected calls matched, and a run passes at 1. Calls that
// match no expected call are reported (flag unexpected_tool_call) and cost nothing unless
// the config is "strict", which allows no call beyond the expected ones: one more makes
// the score 0. A call whose result says it failed (see prescreen.ToolCallFailed) is
// reported (flag failed_tool_call) and still matches: this scorer grades the agent's
// choices, the pre-screen's tool_error grades the outcome; "count_failed": false makes a
// failed call match nothing.
//
// A run without expected calls is skipped, never 0. Expected arguments that are not a JSON
// object, or a schema that does not compile (a keyword outside the subset, such as $ref),
// fail the run naming the field and the keyword.
//
// Mastra's tool-call accuracy scorer (pass/fail) is this scorer with a config:
// expectedTool T is {"expected": [{"name": T}]}, strictMode adds "strict": true, and
// expectedToolOrder [A, B] is {"expected": [{"name": A}, {"name": B}], "order": true}.
// Mastra compares each tool's first call when it checks an order; this scorer finds the
// expected calls as a subsequence, so a retried call still counts.
package toolcalls

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/scorekit/scorekit/internal/jsonsubset"
	"github.com/scorekit/scorekit/internal/textkit"
	"github.com/scorekit/scorekit/sdk"
)

// Name is the scorer's name.
const Name = "tool_calls"

// Flags the scorer sets.
const (
	// FlagMissing: an expected call was not made (or not with the right arguments).
	FlagMissing = "missing_tool_call"
	// FlagUnexpected: a call matched no expected call.
	FlagUnexpected = "unexpected_tool_call"
	// FlagFailed: a call's result says it failed.
	FlagFailed = "failed_tool_call"
	// FlagOutOfOrder: with order, more expected calls were made than were made in order.
	FlagOutOfOrder = "out_of_order"
)

// maxWork bounds the cost of matching, in bytes of arguments compared: every pair of an
// expected call and a call of the same tool costs the size of both. Real runs use a few
// KB of it; a run past it (thousands of calls of one tool against thousands of
// expectations) fails with a reason rather than run for minutes.
const maxWork = 1 << 26

// Config is the scorer's config.
type Config struct {
	// Expected are the calls every run should make, for runs that carry no
	// expected_tool_calls of their own. Optional.
	Expected []sdk.ExpectedToolCall `json:"expected,omitempty"`
	// Order: the expected calls must be made in the order listed. Optional. Default false.
	Order bool `json:"order"`
	// Strict: no call beyond the expected ones; one more makes the score 0. Optional.
	// Default false.
	Strict bool `json:"strict"`
	// CountFailed: a call whose result says it failed still matches its expected call.
	// Optional. Default true.
	CountFailed bool `json:"count_failed"`
}

const configSchema = `{"type": "object", "additionalProperties": false, "properties": {
	"expected": {"type": "array", "description": "The calls every run should make, for runs without expected_tool_calls of their own. Optional.",
		"items": {"type": "object", "additionalProperties": false, "required": ["name"], "properties": {
			"name": {"type": "string", "minLength": 1, "description": "The tool's name."},
			"arguments": {"type": ["object", "string"], "description": "Fields the call's arguments must hold with equal values. Optional."},
			"arguments_schema": {"type": ["object", "string"], "description": "A JSON Schema the call's arguments must satisfy (the draft-07 subset json_valid enforces). Optional."}}}},
	"order": {"type": "boolean", "description": "The expected calls must be made in the order listed. Optional. Default is false."},
	"strict": {"type": "boolean", "description": "No call beyond the expected ones: one more makes the score 0. Optional. Default is false."},
	"count_failed": {"type": "boolean", "description": "A call whose result says it failed still matches. Optional. Default is true."}}}`

const defaults = `{"order": false, "strict": false, "count_failed": true}`

// New returns the tool_calls scorer.
func New() sdk.Scorer { return &scorer{cfg: Config{CountFailed: true}} }

type scorer struct {
	cfg      Config
	expected []expectation // cfg.Expected, parsed and compiled once
}

var (
	_ sdk.Scorer     = (*scorer)(nil)
	_ sdk.Configurer = (*scorer)(nil)
)

func (*scorer) Info() sdk.Info {
	return sdk.Info{
		Name:       Name,
		Version:    "1.0.0",
		ABIVersion: sdk.ABIVersion,
		Description: "Share of the expected tool calls the agent made (optionally in order), with arguments matching an " +
			"expected object or a JSON Schema; unexpected and failed calls reported. Reads run.expected_tool_calls or the config; " +
			"reproduces Mastra's tool-call accuracy scorer by config.",
		Range:        sdk.Unit,
		Threshold:    1,
		ConfigSchema: json.RawMessage(configSchema),
		Defaults:     json.RawMessage(defaults),
	}
}

// Configure reads the config and compiles its expected calls.
func (s *scorer) Configure(raw json.RawMessage) error {
	cfg := Config{CountFailed: true}
	for _, doc := range []json.RawMessage{json.RawMessage(defaults), raw} {
		if len(bytes.TrimSpace(doc)) == 0 || string(bytes.TrimSpace(doc)) == "null" {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(doc))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&cfg); err != nil {
			return fmt.Errorf("configure %s: %w; see its config_schema in `scorekit scorers`", Name, err)
		}
	}
	exp, err := compile(cfg.Expected, "expected")
	if err != nil {
		return fmt.Errorf("configure %s: %w", Name, err)
	}
	s.cfg, s.expected = cfg, exp
	return nil
}

// Score matches call.Run's tool calls with the expected ones.
func (s *scorer) Score(ctx context.Context, call sdk.Call) (sdk.Result, error) {
	run := &call.Run
	exp := s.expected
	if len(run.ExpectedToolCalls) > 0 {
		var err error
		if exp, err = compile(run.ExpectedToolCalls, "expected_tool_calls"); err != nil {
			return sdk.Failed(sdk.CodeInvalidRun, Name+": "+err.Error()), nil
		}
	}
	if len(exp) == 0 {
		return sdk.Skipped(Name + " needs the calls the agent should make: set expected_tool_calls on the run " +
			`([{"name": "cancel_event", "arguments": {"time": "15:00"}}]) or "expected" in the scorer's config`), nil
	}
	m, err := match(ctx, exp, run.ToolCalls, s.cfg)
	if err != nil {
		if ctx.Err() != nil {
			return sdk.Result{}, err
		}
		return sdk.Failed(sdk.CodeLimitExceeded, Name+": "+err.Error()), nil
	}
	return m.result(exp, run.ToolCalls, s.cfg), nil
}

// expectation is an expected call, its arguments parsed and its schema compiled.
type expectation struct {
	sdk.ExpectedToolCall
	args   map[string]any // nil when any arguments do
	schema *jsonsubset.Schema
}

func compile(calls []sdk.ExpectedToolCall, field string) ([]expectation, error) {
	out := make([]expectation, len(calls))
	for i, c := range calls {
		at := field + "[" + strconv.Itoa(i) + "]"
		if c.Name == "" {
			return nil, fmt.Errorf("%s: no name; name the tool the agent should call", at)
		}
		out[i].ExpectedToolCall = c
		if strings.TrimSpace(c.Arguments) != "" {
			v, err := decode(c.Arguments)
			obj, ok := v.(map[string]any)
			if err != nil || !ok {
				return nil, fmt.Errorf(`%s.arguments: want a JSON object of the fields the call's arguments must hold, like {"time": "15:00"}; got %s`, at, clip(c.Arguments, 60))
			}
			out[i].args = obj
		}
		if strings.TrimSpace(c.ArgumentsSchema) != "" {
			sch, err := jsonsubset.Compile([]byte(c.ArgumentsSchema))
			if err != nil {
				return nil, fmt.Errorf("%s.arguments_schema: %v", at, err)
			}
			out[i].schema = sch
		}
	}
	return out, nil
}

// decode parses JSON text with numbers kept as json.Number, as the schema library wants.
func decode(text string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("more than one JSON value")
	}
	return v, nil
}

// arguments is a call's arguments, parsed once: an empty text is no arguments ({}).
type arguments struct {
	v   any
	err error
}

func parseArguments(text string) arguments {
	if strings.TrimSpace(text) == "" {
		return arguments{v: map[string]any{}}
	}
	v, err := decode(text)
	// A framework that encodes the arguments twice leaves a string holding the object.
	if s, ok := v.(string); ok && err == nil {
		if inner, ierr := decode(s); ierr == nil {
			v = inner
		}
	}
	return arguments{v: v, err: err}
}

// check says why a call does not satisfy an expectation, or "" when it does.
func (e *expectation) check(c sdk.ToolCall, args arguments) string {
	if c.Name != e.Name {
		return "calls " + c.Name
	}
	if e.args == nil && e.schema == nil {
		return ""
	}
	if args.err != nil {
		return "its arguments are not JSON (" + clip(c.Arguments, 40) + ")"
	}
	if e.args != nil {
		if why := subset(e.args, args.v, "arguments"); why != "" {
			return why
		}
	}
	if e.schema != nil {
		if err := e.schema.Validate(args.v); err != nil {
			return "its arguments fail the schema: " + err.Error()
		}
	}
	return ""
}

// subset says where got differs from want, or "" when every field want names is in got
// with an equal value: objects recursively, arrays element by element, numbers by value.
func subset(want, got any, path string) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return path + " is " + show(got) + ", want an object"
		}
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			gv, ok := g[k]
			if !ok {
				return path + "." + k + " is missing, want " + show(w[k])
			}
			if why := subset(w[k], gv, path+"."+k); why != "" {
				return why
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return path + " is " + show(got) + ", want " + show(want)
		}
		for i := range w {
			if why := subset(w[i], g[i], path+"["+strconv.Itoa(i)+"]"); why != "" {
				return why
			}
		}
		return ""
	case json.Number:
		if g, ok := got.(json.Number); ok && sameNumber(w, g) {
			return ""
		}
	default:
		if want == got {
			return ""
		}
	}
	return path + " is " + show(got) + ", want " + show(want)
}

func sameNumber(a, b json.Number) bool {
	if a == b {
		return true
	}
	x, err1 := strconv.ParseFloat(string(a), 64)
	y, err2 := strconv.ParseFloat(string(b), 64)
	return err1 == nil && err2 == nil && x == y && !math.IsInf(x, 0)
}

// show writes a value as JSON, cut at 60 bytes.
func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return textkit.Clip(string(b), 60)
}

// clip quotes s, trimmed and cut to its first n bytes (whole characters), marking a cut.
func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return strconv.Quote(textkit.Prefix(s, n)) + "..."
	}
	return strconv.Quote(s)
}
