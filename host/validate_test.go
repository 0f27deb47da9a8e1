package host

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/sdk"
)

func TestDecodeRun(t *testing.T) {
	cases := []struct {
		name string
		line string
		err  string // the whole message; "" means valid
		ids  []string
	}{
		{name: "minimal", line: `{"output":"Paris"}`},
		{name: "unknown fields are tolerated", line: `{"output":"Paris","trace_id":"abc","latency_ms":12,"citation_audit":{"citations":1,"sentences":1,"uncited_sentences":0,"hallucination_detected":false,"source":"x"}}`},
		{name: "passages as strings and objects are numbered", line: `{"output":"o","context":["a",{"id":"doc-3","text":"b"},{"text":"c"}]}`, ids: []string{"1", "doc-3", "3"}},
		{name: "empty output is allowed", line: `{"input":"hi","output":""}`},
		{name: "missing output", line: `{"input":"What is the capital of France?"}`, err: `run: missing required field "output"`},
		{name: "bad context item", line: `{"output":"o","context":["a","b",3]}`, err: `run: context[2]: want a string or {id, text}, got number`},
		{name: "passage object without text", line: `{"output":"o","context":[{"id":"x"}]}`, err: `run: context[0]: missing required field "text"`},
		{name: "passage id of the wrong type", line: `{"output":"o","context":[{"id":true,"text":"t"}]}`, err: `run: context[0].id: want a string or a number, got boolean`},
		{name: "numeric passage id is kept as written", line: `{"output":"o","context":[{"id":7,"text":"t"},"u"]}`, ids: []string{"7", "2"}},
		{name: "context not an array", line: `{"output":"o","context":"a b c"}`, err: `run: context: want array, got string`},
		{name: "output of the wrong type", line: `{"output":42}`, err: `run: output: want a string or a chat message {role, content} or an array of chat messages, got number`},
		{name: "two problems report the first and count the rest", line: `{"output":1,"input":2}`, err: `run: input: want a string or an array of chat messages, got number (and 1 more problem)`},
		{name: "id of the wrong type", line: `{"id":["a"],"output":"o"}`, err: `run: id: want a string or a number, got array`},
		{name: "output from a user", line: `{"output":[{"role":"assistant","content":"a"},{"role":"user","content":"b"}]}`, err: `run: output[1]: role "user": the output holds the agent's own turns (assistant and tool messages); put earlier turns in the input`},
		{name: "conversation twice", line: `{"input":[{"role":"user","content":"q"}],"conversation":[{"role":"user","content":"q"}],"output":"o"}`, err: `run: input: a conversation is given both as "input" and as "conversation"; keep one`},
		{name: "tool calls twice", line: `{"output":{"role":"assistant","tool_calls":[{"name":"f"}]},"tool_calls":[{"name":"f"}]}`, err: `run: output: tool calls are given both in the output's messages and as "tool_calls"; keep one`},
		{name: "a JSON array is not a run", line: `[{"output":"o"}]`, err: `run: want object, got array`},
		{name: "mistyped audit count", line: `{"output":"o","citation_audit":{"citations":"2"}}`, err: `run: citation_audit.citations: want integer, got string`},
		{name: "array index inside a nested field", line: `{"output":"o","citation_audit":{"invalid_citations":[1]}}`, err: `run: citation_audit.invalid_citations[0]: want string, got number`},
		{name: "not an object", line: `["output"]`, err: `run: want object, got array`},
		{name: "invalid JSON", line: `{"output": "Paris",}`, err: `run: invalid JSON at byte 20: invalid character '}' looking for beginning of object key string`},
		{name: "truncated JSON", line: `{"output": "Par`, err: `run: invalid JSON: unexpected end of input; is the line cut short?`},
		{name: "trailing garbage", line: `{"output":"a"} x`, err: `run: invalid JSON: invalid character after top-level value`},
		{name: "empty line", line: `  `, err: `run: empty; want a JSON object`},
		{name: "empty passage text", line: `{"output":"o","context":["a",""]}`, err: `run: invalid run: context[1] (id "2") has empty text; drop the passage or fill it`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := DecodeRun([]byte(c.line))
			if c.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				if c.ids != nil {
					var ids []string
					for _, p := range r.Context {
						ids = append(ids, p.ID)
					}
					if !slices.Equal(ids, c.ids) {
						t.Errorf("ids %v, want %v", ids, c.ids)
					}
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want %q", c.err)
			}
			if err.Error() != c.err {
				t.Errorf("error\n got %q\nwant %q", err, c.err)
			}
			if !errors.Is(err, sdk.ErrInvalidRun) {
				t.Errorf("error %v does not wrap sdk.ErrInvalidRun", err)
			}
		})
	}
}

func TestDecodeRunFieldPath(t *testing.T) {
	var ve *ValidationError
	_, err := DecodeRun([]byte(`{"output":"o","context":["a","b",{"text":false}]}`))
	if !errors.As(err, &ve) {
		t.Fatalf("error %v is not a *ValidationError", err)
	}
	if ve.Doc != "run" || ve.Path != "context[2].text" || ve.Problem != "want string, got boolean" {
		t.Errorf("got %+v", *ve)
	}
}

func TestDecodeResult(t *testing.T) {
	cases := []struct {
		name string
		raw  string
		err  string // substring; "" means valid
	}{
		{name: "scored", raw: `{"status":"scored","score":0.8,"dimensions":{"relevance":0.9},"reason":"ok","telemetry":{"duration_ms":1.5,"judge_calls":2}}`},
		{name: "telemetry is optional", raw: `{"status":"skipped","reason":"no context"}`},
		{name: "failed with a known code", raw: `{"status":"failed","error":{"code":"judge_error","message":"HTTP 500"}}`},
		{name: "unknown field is an error", raw: `{"status":"scored","score":1,"confidence":0.2}`, err: `result: unknown field "confidence" (known: adjustments, citation_audit,`},
		{name: "unknown nested field", raw: `{"status":"scored","score":1,"telemetry":{"gpu_ms":3}}`, err: `result: telemetry: unknown field "gpu_ms"`},
		{name: "score as a string", raw: `{"status":"scored","score":"0.8"}`, err: `result: score: want number, got string`},
		{name: "dimension as a string", raw: `{"status":"scored","score":1,"dimensions":{"relevance":"high"}}`, err: `result: dimensions.relevance: want number, got string`},
		{name: "odd keys are quoted in the path", raw: `{"status":"scored","score":1,"dimensions":{"tone of voice":true}}`, err: `result: dimensions["tone of voice"]: want number, got boolean`},
		{name: "unknown status", raw: `{"status":"ok","score":1}`, err: `result: status: value must be one of 'scored', 'skipped', 'failed'`},
		{name: "missing status", raw: `{"score":1}`, err: `result: missing required field "status"`},
		{name: "unknown error code", raw: `{"status":"failed","error":{"code":"oops","message":"m"}}`, err: `result: error.code: value must be one of`},
		{name: "scored without a score", raw: `{"status":"scored"}`, err: `result: invalid result: status scored without a score`},
		{name: "failed without an error", raw: `{"status":"failed"}`, err: `status failed without an error message`},
		{name: "not JSON", raw: `status=scored`, err: `result: invalid JSON`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeResult([]byte(c.raw))
			if c.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("error %v, want %q", err, c.err)
			}
			if !errors.Is(err, sdk.ErrInvalidResult) {
				t.Errorf("error %v does not wrap sdk.ErrInvalidResult", err)
			}
			if got := failedFrom(err); got.Error.Code != sdk.CodeInvalidResult {
				t.Errorf("pipeline code %q, want invalid_result", got.Error.Code)
			}
		})
	}
}

// Text the decoder replaces with U+FFFD (invalid UTF-8, a surrogate escape outside a
// pair) is flagged text_repaired; text it keeps as it is is not, nor is a flag doubled.
func TestDecodeResultFlagsRepairedText(t *testing.T) {
	cases := []struct {
		name, raw string
		repaired  bool
		reason    string
	}{
		{"valid", `{"status":"scored","score":1,"reason":"caf\u00e9 \ud83d\ude00 \ufffd"}`, false, "café 😀 \ufffd"},
		{"invalid UTF-8", "{\"status\":\"scored\",\"score\":1,\"reason\":\"a \xff\xfe b\"}", true, "a \ufffd\ufffd b"},
		{"a lone high surrogate", `{"status":"scored","score":1,"reason":"a \ud83d b"}`, true, "a \ufffd b"},
		{"a high surrogate before another escape", `{"status":"scored","score":1,"reason":"a \ud83d\u0041"}`, true, "a \ufffdA"},
		{"a lone low surrogate", `{"status":"scored","score":1,"reason":"a \ude00"}`, true, "a \ufffd"},
		{"an escaped backslash, not an escape", `{"status":"scored","score":1,"reason":"a \\ud800"}`, false, `a \ud800`},
		{"invalid UTF-8 in a step", "{\"status\":\"scored\",\"score\":1,\"steps\":[{\"name\":\"x\xff\"}]}", true, ""},
		{"flagged by the scorer already", "{\"status\":\"scored\",\"score\":1,\"flags\":[\"text_repaired\"],\"reason\":\"\xff\"}", true, "\ufffd"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := DecodeResult([]byte(c.raw))
			if err != nil {
				t.Fatal(err)
			}
			if got := slices.Index(r.Flags, FlagTextRepaired) >= 0; got != c.repaired || len(r.Flags) > 1 {
				t.Fatalf("flags %q; want text_repaired %v, once", r.Flags, c.repaired)
			}
			if r.Reason != c.reason {
				t.Fatalf("reason %q; want %q", r.Reason, c.reason)
			}
		})
	}
}

func TestDecodeInfo(t *testing.T) {
	cases := []struct {
		name string
		raw  string
		err  string
	}{
		{name: "valid", raw: `{"name":"masis","version":"1.0.0","abi_version":1,"description":"d","threshold":0.7,"dimensions":[{"name":"faithfulness","weight":0.35}],"config_schema":{"type":"object"}}`},
		{name: "bad name", raw: `{"name":"MASIS","version":"1","abi_version":1,"description":"d","threshold":0.7}`, err: `info: name: `},
		{name: "unknown field", raw: `{"name":"m","version":"1","abi_version":1,"description":"d","threshold":0.7,"author":"x"}`, err: `info: unknown field "author"`},
		{name: "negative weight", raw: `{"name":"m","version":"1","abi_version":1,"description":"d","threshold":0.7,"dimensions":[{"name":"a","weight":-1}]}`, err: `info: dimensions[0].weight: `},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeInfo([]byte(c.raw))
			if c.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.err) || !errors.Is(err, ErrInvalidInfo) {
				t.Fatalf("error %v, want ErrInvalidInfo saying %q", err, c.err)
			}
		})
	}
}
