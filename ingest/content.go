package ingest

import (
	"encoding/json"
	"strconv"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/scorekit/scorekit/sdk"
)

// spanMessages is what a span records of its conversation.
type spanMessages struct {
	// input and output are the conversation and answer in a model call's conventions;
	// output is nil when the span recorded none.
	input, output []sdk.Turn
	finish        string
	// sys is the span's system instructions (gen_ai.system_instructions), as a turn.
	sys []sdk.Turn
}

// messages reads a span's conversation and output in every convention it may carry.
func (sp *otelSpan) messages() spanMessages {
	attrs := sp.span.Attributes()
	var m spanMessages
	var sys []sdk.Turn
	if text := textAttr(attrs, "gen_ai.system_instructions"); text != "" {
		sys = []sdk.Turn{{Role: "system", Content: text}}
	}
	switch {
	case has(attrs, "gen_ai.output.messages"):
		in, _ := semMessages(attrs, "gen_ai.input.messages", "user")
		m.input = append(sys, in...)
		m.output, m.finish = semMessages(attrs, "gen_ai.output.messages", "assistant")
		if m.output == nil {
			m.output = []sdk.Turn{}
		}
	default:
		if in, out, finish, ok := eventMessages(sp.events()); ok {
			m.input, m.output, m.finish = append(sys, in...), out, finish
			break
		}
		if prompt, completion, finish := indexed(attrs); completion != nil {
			m.input, m.output, m.finish = append(sys, prompt...), completion, finish
			break
		}
		if out, ok := indexedMessages(attrs, "llm.output_messages."); ok {
			in, _ := indexedMessages(attrs, "llm.input_messages.")
			m.input, m.output = append(sys, in...), out
			break
		}
		if sp.role == RoleModel && (has(attrs, "ai.response.text") || has(attrs, "ai.response.toolCalls") || has(attrs, "ai.response.object")) {
			m.input = append(sys, aiMessages(attrs, "ai.prompt.messages")...)
			m.output = []sdk.Turn{aiResponse(attrs)}
			break
		}
		in, _ := semMessages(attrs, "gen_ai.input.messages", "user")
		m.input = append(sys, in...)
		if len(m.input) == 0 {
			m.input = nil
		}
	}
	if m.output != nil && !hasUser(m.input) {
		// The answer on the span, the question in its events or log records.
		if in, _, _, _ := eventMessages(sp.events()); len(in) > 0 {
			m.input = mergeInput(in, m.input)
		}
	}
	m.sys = sys
	return m
}

// ownMessages reads a run's span's own input and answer in its framework's terms
// (input.value, traceloop.entity.input, mastra.agent_run.input, ai.prompt ...), read
// where its model calls record none; output is nil when it has none.
func ownMessages(attrs pcommon.Map) (input, output []sdk.Turn) {
	for _, k := range []string{"mastra.agent_run.input", "input.value", "traceloop.entity.input", "ai.prompt"} {
		if v, ok := attrs.Get(k); ok {
			input = promptTurns(decodeJSONValue(v.AsRaw()))
			break
		}
	}
	switch {
	case has(attrs, "ai.response.text") || has(attrs, "ai.response.toolCalls"):
		output = []sdk.Turn{aiResponse(attrs)}
	default:
		for _, k := range []string{"mastra.agent_run.output", "output.value", "traceloop.entity.output", "ai.response.object"} {
			if v, ok := attrs.Get(k); ok {
				output = []sdk.Turn{{Role: "assistant", Content: answerText(decodeJSONValue(v.AsRaw()))}}
				break
			}
		}
	}
	return input, output
}

// promptTurns reads a span's own input: a conversation ({"messages": [...]}, a list of
// messages), the AI SDK's call arguments ({"system", "prompt"}), traceloop's ({"args",
// "kwargs"}), or text as the user's message.
func promptTurns(v any) []sdk.Turn {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		if x == "" {
			return nil
		}
		return []sdk.Turn{{Role: "user", Content: x}}
	case []any:
		if turns := anyMessages(x); len(turns) > 0 {
			return turns
		}
	case map[string]any:
		var out []sdk.Turn
		if s, ok := x["system"].(string); ok && s != "" {
			out = append(out, sdk.Turn{Role: "system", Content: s})
		}
		if msgs, ok := decodeJSONValue(x["messages"]).([]any); ok {
			return append(out, anyMessages(msgs)...)
		}
		if p, ok := x["prompt"]; ok {
			return append(out, promptTurns(decodeJSONValue(p))...)
		}
		if args, ok := x["args"].([]any); ok {
			var text []string
			for _, a := range args {
				if s := answerText(a); s != "" {
					text = append(text, s)
				}
			}
			if len(text) > 0 {
				return append(out, sdk.Turn{Role: "user", Content: strings.Join(text, "\n")})
			}
			if kw, ok := x["kwargs"].(map[string]any); ok && len(kw) > 0 {
				return append(out, sdk.Turn{Role: "user", Content: jsonText(kw)})
			}
			return out
		}
		if len(out) > 0 {
			return out
		}
	}
	if s := answerText(v); s != "" {
		return []sdk.Turn{{Role: "user", Content: s}}
	}
	return nil
}

// answerText is the text of an answer as frameworks record it: a string, {"text": ...},
// {"content": ...}, a chat completion's first choice, or any other value as its JSON.
func answerText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case map[string]any:
		if cs, ok := x["choices"].([]any); ok && len(cs) > 0 {
			if c, ok := cs[0].(map[string]any); ok {
				return textOf(c["message"])
			}
		}
		for _, k := range []string{"text", "content", "output", "result", "value"} {
			if s, ok := x[k]; ok {
				return answerText(s)
			}
		}
	case []any:
		if s := textOf(x); s != "" {
			return s
		}
	}
	return jsonText(v)
}

// anyMessages reads messages in OpenAI's shape or the AI SDK's ({role, content} with
// content text or parts: text, tool-call, tool-result), each tool result a turn of its own.
func anyMessages(msgs []any) []sdk.Turn {
	var out []sdk.Turn
	for _, raw := range msgs {
		m, ok := raw.(map[string]any)
		if !ok {
			continue
		}
		role, _ := m["role"].(string)
		t := sdk.Turn{Role: role}
		if n, ok := m["name"].(string); ok {
			t.Name = n
		}
		if id, ok := m["tool_call_id"].(string); ok {
			t.ToolCallID = id
		}
		var results []sdk.Turn
		switch c := decodeJSONValue(m["content"]).(type) {
		case string:
			t.Content = c
		case []any:
			var text []string
			for _, p := range c {
				part, ok := p.(map[string]any)
				if !ok {
					continue
				}
				switch part["type"] {
				case "text":
					if s, _ := part["text"].(string); s != "" {
						text = append(text, s)
					}
				case "tool-call":
					t.ToolCalls = append(t.ToolCalls, sdk.ToolCall{ID: strOf(part["toolCallId"]), Name: strOf(part["toolName"]),
						Arguments: jsonText(decodeJSONValue(firstOf(part["input"], part["args"])))})
				case "tool-result":
					out := firstOf(part["output"], part["result"])
					if o, ok := out.(map[string]any); ok && o["type"] != nil && o["value"] != nil {
						out = o["value"]
					}
					results = append(results, sdk.Turn{Role: "tool", ToolCallID: strOf(part["toolCallId"]), Name: strOf(part["toolName"]), Content: jsonText(out)})
				default:
					if s := textOf(part); s != "" {
						text = append(text, s)
					}
				}
			}
			t.Content = strings.Join(text, "\n")
		case nil:
		default:
			t.Content = jsonText(c)
		}
		if calls := decodeJSONValue(m["tool_calls"]); calls != nil {
			var tcs []sdk.ToolCall
			if json.Unmarshal(mustJSON(calls), &tcs) == nil {
				t.ToolCalls = append(t.ToolCalls, tcs...)
			}
		}
		if t.Role == "tool" && len(results) > 0 && t.Content == "" {
			out = append(out, results...)
			continue
		}
		if t.Content != "" || len(t.ToolCalls) > 0 || len(results) == 0 {
			out = append(out, t)
		}
		out = append(out, results...)
	}
	return out
}

// aiMessages reads an AI SDK attribute of messages (JSON).
func aiMessages(attrs pcommon.Map, k string) []sdk.Turn {
	v, ok := attrs.Get(k)
	if !ok {
		return nil
	}
	switch x := decodeJSONValue(v.AsRaw()).(type) {
	case []any:
		return anyMessages(x)
	case string:
		if x != "" {
			return []sdk.Turn{{Role: "user", Content: x}}
		}
	}
	return nil
}

// aiResponse reads the AI SDK's answer: ai.response.text (or ai.response.object) and
// ai.response.toolCalls.
func aiResponse(attrs pcommon.Map) sdk.Turn {
	t := sdk.Turn{Role: "assistant", Content: firstNonEmpty(str(attrs, "ai.response.text"), str(attrs, "ai.response.object"))}
	if v, ok := attrs.Get("ai.response.toolCalls"); ok {
		if calls, ok := decodeJSONValue(v.AsRaw()).([]any); ok {
			for _, c := range calls {
				m, ok := c.(map[string]any)
				if !ok {
					continue
				}
				t.ToolCalls = append(t.ToolCalls, sdk.ToolCall{ID: strOf(m["toolCallId"]), Name: strOf(m["toolName"]),
					Arguments: jsonText(decodeJSONValue(firstOf(m["input"], m["args"])))})
			}
		}
	}
	return t
}

// toolCallsOf reads tool spans as calls, in the order they started.
func toolCallsOf(tools []*otelSpan) []sdk.ToolCall {
	var out []sdk.ToolCall
	for _, sp := range byStart(tools) {
		out = append(out, toolCallOf(sp.span))
	}
	return out
}

// toolCallOf reads a tool span as a call (execute_tool, ai.toolCall, an OpenInference TOOL,
// a traceloop tool); a span that failed without a result has its error as the result,
// {"error": ...}, which the scorers read as a failed call.
func toolCallOf(sp ptrace.Span) sdk.ToolCall {
	a := sp.Attributes()
	name := sp.Name()
	name = strings.TrimPrefix(name, "execute_tool ")
	name = strings.TrimSuffix(name, ".tool")
	c := sdk.ToolCall{
		ID:        firstNonEmpty(str(a, "gen_ai.tool.call.id"), str(a, "ai.toolCall.id"), str(a, "tool_call.id"), str(a, "tool.id")),
		Name:      firstNonEmpty(str(a, "gen_ai.tool.name"), str(a, "ai.toolCall.name"), str(a, "tool.name"), str(a, "traceloop.entity.name"), name),
		Arguments: firstNonEmpty(valueJSONText(a, "gen_ai.tool.call.arguments"), valueJSONText(a, "ai.toolCall.args"), valueJSONText(a, "tool.parameters")),
		Result:    firstNonEmpty(valueJSONText(a, "gen_ai.tool.call.result"), valueJSONText(a, "ai.toolCall.result")),
	}
	if c.Arguments == "" {
		if v, ok := a.Get("traceloop.entity.input"); ok {
			in := decodeJSONValue(v.AsRaw())
			if m, ok := in.(map[string]any); ok && m["kwargs"] != nil {
				if args, _ := m["args"].([]any); len(args) == 0 {
					in = m["kwargs"]
				}
			}
			c.Arguments = jsonText(in)
		} else {
			c.Arguments = valueJSONText(a, "input.value")
		}
	}
	if c.Result == "" {
		c.Result = firstNonEmpty(valueJSONText(a, "traceloop.entity.output"), valueJSONText(a, "output.value"))
	}
	if e := errorOf(sp); e != "" && c.Result == "" {
		c.Result = jsonText(map[string]string{"error": e})
	}
	return c
}

// modelOf is the model a span names.
func modelOf(attrs pcommon.Map) string {
	return firstNonEmpty(str(attrs, "gen_ai.response.model"), str(attrs, "gen_ai.request.model"), str(attrs, "llm.model_name"),
		str(attrs, "ai.response.model"), str(attrs, "ai.model.id"))
}

// finishOf is the finish reason a span's attributes give: gen_ai.response.finish_reasons
// (an array, or a JSON string of one), gen_ai.response.finish_reason, llm.finish_reason,
// ai.response.finishReason.
func finishOf(attrs pcommon.Map) string {
	if v, ok := attrs.Get("gen_ai.response.finish_reasons"); ok {
		switch x := decodeJSONValue(v.AsRaw()).(type) {
		case []any:
			if len(x) > 0 {
				return strOf(x[0])
			}
		case string:
			return x
		}
	}
	return firstNonEmpty(str(attrs, "gen_ai.response.finish_reason"), str(attrs, "llm.finish_reason"), str(attrs, "ai.response.finishReason"))
}

// usageOf is a span's token usage, in any convention's keys.
func usageOf(attrs pcommon.Map) (in, out float64, ok bool) {
	in, okIn := numberAttr(attrs, "gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt",
		"ai.usage.inputTokens", "ai.usage.promptTokens")
	out, okOut := numberAttr(attrs, "gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens", "llm.token_count.completion",
		"ai.usage.outputTokens", "ai.usage.completionTokens")
	return in, out, okIn || okOut
}

func has(attrs pcommon.Map, k string) bool { _, ok := attrs.Get(k); return ok }

// decodeJSONValue reads a string that holds a JSON object, array or string as that value;
// any other value is returned as it is.
func decodeJSONValue(v any) any {
	s, ok := v.(string)
	if !ok {
		return v
	}
	t := strings.TrimSpace(s)
	if t == "" || t[0] != '{' && t[0] != '[' && t[0] != '"' {
		return v
	}
	var out any
	if json.Unmarshal([]byte(t), &out) != nil {
		return v
	}
	return out
}

// numberAttr returns the first of keys that holds a number (or a string of one).
func numberAttr(m pcommon.Map, keys ...string) (float64, bool) {
	for _, k := range keys {
		v, ok := m.Get(k)
		if !ok {
			continue
		}
		switch v.Type() {
		case pcommon.ValueTypeInt, pcommon.ValueTypeDouble:
			return number(v), true
		case pcommon.ValueTypeStr:
			if f, err := strconv.ParseFloat(strings.TrimSpace(v.Str()), 64); err == nil {
				return f, true
			}
		}
	}
	return 0, false
}

// str returns an attribute as a string, or "".
func str(m pcommon.Map, k string) string {
	if v, ok := m.Get(k); ok {
		return v.AsString()
	}
	return ""
}

func strOf(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	if v == nil {
		return ""
	}
	return jsonText(v)
}

func firstOf(vs ...any) any {
	for _, v := range vs {
		if v != nil {
			return v
		}
	}
	return nil
}

// valueText returns a string value as it is and any other as its JSON text.
func valueText(v pcommon.Value) string {
	if v.Type() == pcommon.ValueTypeStr {
		return v.Str()
	}
	b, err := json.Marshal(v.AsRaw())
	if err != nil {
		return v.AsString()
	}
	return string(b)
}

// valueJSONText returns a string attribute as it is and any other as its JSON text.
func valueJSONText(m pcommon.Map, k string) string {
	v, ok := m.Get(k)
	if !ok {
		return ""
	}
	return valueText(v)
}

// decodeJSON decodes data into v as encoding/json does (go-json-experiment's decoder with
// its options for v1's behaviour: names matched without case, invalid UTF-8 replaced,
// duplicate names taken), at less than half its cost: a request's runs decode every
// agent span's messages, which was the largest part of reading them.
func decodeJSON(data []byte, v any) error {
	return jsonv2.Unmarshal(data, v, jsonv1.DefaultOptionsV1())
}

// rawText returns a JSON string's value, any other JSON value as its text, null as "".
func rawText(raw json.RawMessage) string {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return ""
	}
	var v string
	if decodeJSON(raw, &v) == nil {
		return v
	}
	return s
}

func number(v pcommon.Value) float64 {
	if v.Type() == pcommon.ValueTypeInt {
		return float64(v.Int())
	}
	return v.Double()
}
