package ingest

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/scorekit/scorekit/sdk"
)

// OTelGenAI converts OpenTelemetry traces that follow the GenAI semantic conventions. The
// input is OTLP JSON, as the OpenTelemetry Collector's file exporter writes it: one
// ExportTraceServiceRequest per line, or one document. It is read with the Collector's own
// data model (go.opentelemetry.io/collector/pdata).
//
// Runs come from agent spans (gen_ai.operation.name invoke_agent) when the input has any,
// else from model call spans (chat, text_completion, generate_content): one run per span,
// so an agent's run is not scored again through each model call it made. A run's
// conversation and output are read from
//
//   - gen_ai.system_instructions, gen_ai.input.messages and gen_ai.output.messages (the
//     conventions since v1.37: messages of typed parts), or
//   - gen_ai.prompt.N.* and gen_ai.completion.N.* (the indexed attributes of earlier
//     instrumentations such as OpenLLMetry);
//
// an agent span whose messages carry no tool calls gets those of the execute_tool spans
// below it (gen_ai.tool.name, gen_ai.tool.call.id, .arguments, .result). Its metadata keeps
// the trace and span ids, the operation, model, provider, conversation id, token usage,
// the finish reason (which the pre-screen reads) and, for a span whose status is an error,
// the error. The run's time is the span's end.
func OTelGenAI(r io.Reader, o Options, emit func(sdk.Run) error) error {
	var spans []*otelSpan
	byID := map[string]*otelSpan{}
	err := records(r, func(n int, raw json.RawMessage) error {
		td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(raw)
		if err != nil {
			return o.report(n, fmt.Errorf("not OTLP JSON traces: %w", err))
		}
		rss := td.ResourceSpans()
		for i := range rss.Len() {
			rs := rss.At(i)
			service := ""
			if v, ok := rs.Resource().Attributes().Get("service.name"); ok {
				service = v.AsString()
			}
			sss := rs.ScopeSpans()
			for j := range sss.Len() {
				ss := sss.At(j).Spans()
				for k := range ss.Len() {
					sp := &otelSpan{span: ss.At(k), record: n, service: service}
					sp.op = str(sp.span.Attributes(), "gen_ai.operation.name")
					spans = append(spans, sp)
					byID[sp.key(sp.span.SpanID().String())] = sp
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, sp := range spans {
		if p := sp.span.ParentSpanID(); !p.IsEmpty() {
			sp.parent = byID[sp.key(p.String())]
		}
	}
	runOps := map[string]bool{"invoke_agent": true}
	if !hasOp(spans, "invoke_agent") {
		runOps = map[string]bool{"chat": true, "text_completion": true, "generate_content": true}
	}
	tools := map[*otelSpan][]sdk.ToolCall{}
	for _, sp := range spans {
		if sp.op != "execute_tool" {
			continue
		}
		for a := sp.parent; a != nil; a = a.parent {
			if runOps[a.op] {
				tools[a] = append(tools[a], toolCallOf(sp.span))
				break
			}
		}
	}
	found := false
	for _, sp := range spans {
		if !runOps[sp.op] {
			continue
		}
		found = true
		run, err := sp.run(tools[sp])
		if err != nil {
			if err := o.report(sp.record, fmt.Errorf("span %s (%s): %w", sp.span.SpanID(), sp.op, err)); err != nil {
				return err
			}
			continue
		}
		if run.Agent == "" {
			run.Agent = firstNonEmpty(o.Agent, sp.service)
		}
		if err := emit(run); err != nil {
			return err
		}
	}
	if !found {
		return fmt.Errorf("no GenAI spans: no span has gen_ai.operation.name invoke_agent, chat, text_completion or generate_content")
	}
	return nil
}

type otelSpan struct {
	span    ptrace.Span
	record  int
	service string
	op      string
	parent  *otelSpan
}

func (sp *otelSpan) key(spanID string) string { return sp.span.TraceID().String() + "/" + spanID }

func hasOp(spans []*otelSpan, op string) bool {
	for _, sp := range spans {
		if sp.op == op {
			return true
		}
	}
	return false
}

func (sp *otelSpan) run(tools []sdk.ToolCall) (sdk.Run, error) {
	attrs := sp.span.Attributes()
	input, output, finish, err := messagesOf(attrs)
	if err != nil {
		return sdk.Run{}, err
	}
	if output == nil {
		return sdk.Run{}, fmt.Errorf("no output recorded (no gen_ai.output.messages nor gen_ai.completion.* attributes): " +
			"recording message content is opt-in in most instrumentations (for OpenTelemetry's Python ones, set " +
			"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true)")
	}
	run, err := runFromTurns(input, output)
	if err != nil {
		return sdk.Run{}, err
	}
	if len(run.ToolCalls) == 0 {
		run.ToolCalls = tools
	}
	run.ID = sp.span.SpanID().String()
	run.Agent = str(attrs, "gen_ai.agent.name")
	for a := sp.parent; run.Agent == "" && a != nil; a = a.parent {
		run.Agent = str(a.span.Attributes(), "gen_ai.agent.name")
	}
	if end := sp.span.EndTimestamp(); end != 0 {
		t := end.AsTime().UTC()
		run.Time = &t
	}
	meta := map[string]any{
		"trace_id":  sp.span.TraceID().String(),
		"span_id":   run.ID,
		"operation": sp.op,
	}
	setIf(meta, "model", firstNonEmpty(str(attrs, "gen_ai.response.model"), str(attrs, "gen_ai.request.model")))
	setIf(meta, "provider", firstNonEmpty(str(attrs, "gen_ai.provider.name"), str(attrs, "gen_ai.system")))
	setIf(meta, "conversation_id", str(attrs, "gen_ai.conversation.id"))
	if v, ok := attrs.Get("gen_ai.response.finish_reasons"); ok {
		if v.Type() == pcommon.ValueTypeSlice && v.Slice().Len() > 0 {
			finish = v.Slice().At(0).AsString()
		} else if v.Type() == pcommon.ValueTypeStr {
			finish = v.Str()
		}
	}
	setIf(meta, "finish_reason", finish)
	for _, k := range []string{"gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"} {
		if v, ok := attrs.Get(k); ok && (v.Type() == pcommon.ValueTypeInt || v.Type() == pcommon.ValueTypeDouble) {
			meta[strings.TrimPrefix(k, "gen_ai.usage.")] = number(v)
		}
	}
	if st := sp.span.Status(); st.Code() == ptrace.StatusCodeError {
		meta["error"] = firstNonEmpty(st.Message(), str(attrs, "error.type"), "the span's status is an error")
	}
	run.Metadata = meta
	return run, nil
}

// semMessage is a message of gen_ai.input.messages or gen_ai.output.messages.
type semMessage struct {
	Role         string    `json:"role"`
	Name         string    `json:"name"`
	Parts        []semPart `json:"parts"`
	FinishReason string    `json:"finish_reason"`
}

// semPart is one typed part: text, tool_call, tool_call_response, or one not kept (blob,
// file_data, reasoning ...).
type semPart struct {
	Type      string          `json:"type"`
	Content   json.RawMessage `json:"content"`
	ID        json.RawMessage `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Response  json.RawMessage `json:"response"`
}

// messagesOf reads a span's conversation and output, from the current conventions or the
// indexed attributes. output is nil when the span recorded none.
func messagesOf(attrs pcommon.Map) (input, output []sdk.Turn, finish string, err error) {
	var sys []semPart
	if err := attrJSON(attrs, "gen_ai.system_instructions", &sys); err != nil {
		return nil, nil, "", err
	}
	if text := partsText(sys); text != "" {
		input = append(input, sdk.Turn{Role: "system", Content: text})
	}
	var in, out []semMessage
	if err := attrJSON(attrs, "gen_ai.input.messages", &in); err != nil {
		return nil, nil, "", err
	}
	if err := attrJSON(attrs, "gen_ai.output.messages", &out); err != nil {
		return nil, nil, "", err
	}
	if _, ok := attrs.Get("gen_ai.output.messages"); ok {
		for _, m := range in {
			input = append(input, turnsOfSem(m)...)
		}
		output = []sdk.Turn{}
		for _, m := range out {
			output = append(output, turnsOfSem(m)...)
			if finish == "" {
				finish = m.FinishReason
			}
		}
		return input, output, finish, nil
	}
	prompt, completion, finish := indexed(attrs)
	if completion == nil {
		return nil, nil, "", nil
	}
	return append(input, prompt...), completion, finish, nil
}

// turnsOfSem maps a message of typed parts to turns: its text and tool calls, and one tool
// turn per tool call response.
func turnsOfSem(m semMessage) []sdk.Turn {
	t := sdk.Turn{Role: m.Role, Name: m.Name}
	var text []string
	var out []sdk.Turn
	for _, p := range m.Parts {
		switch p.Type {
		case "text":
			if s := rawText(p.Content); s != "" {
				text = append(text, s)
			}
		case "tool_call":
			t.ToolCalls = append(t.ToolCalls, sdk.ToolCall{ID: rawText(p.ID), Name: p.Name, Arguments: rawText(p.Arguments)})
		case "tool_call_response":
			out = append(out, sdk.Turn{Role: "tool", ToolCallID: rawText(p.ID), Content: rawText(p.Response)})
		}
	}
	t.Content = strings.Join(text, "\n")
	if t.Content != "" || len(t.ToolCalls) > 0 || len(out) == 0 {
		out = append([]sdk.Turn{t}, out...)
	}
	return out
}

func partsText(parts []semPart) string {
	var text []string
	for _, p := range parts {
		if p.Type == "text" {
			if s := rawText(p.Content); s != "" {
				text = append(text, s)
			}
		}
	}
	return strings.Join(text, "\n")
}

// indexed reads gen_ai.prompt.N.{role,content} and gen_ai.completion.N.{role,content,
// finish_reason,tool_calls.M.{id,name,arguments}}.
func indexed(attrs pcommon.Map) (prompt, completion []sdk.Turn, finish string) {
	type slot struct {
		turn  sdk.Turn
		calls map[int]*sdk.ToolCall
	}
	read := func(prefix string) (map[int]*slot, string) {
		slots := map[int]*slot{}
		finish := ""
		attrs.Range(func(k string, v pcommon.Value) bool {
			rest, ok := strings.CutPrefix(k, prefix)
			if !ok {
				return true
			}
			idx, field, ok := strings.Cut(rest, ".")
			n, err := strconv.Atoi(idx)
			if !ok || err != nil {
				return true
			}
			s := slots[n]
			if s == nil {
				s = &slot{calls: map[int]*sdk.ToolCall{}}
				slots[n] = s
			}
			switch field {
			case "role":
				s.turn.Role = v.AsString()
			case "content":
				s.turn.Content = v.AsString()
			case "finish_reason":
				if n == 0 {
					finish = v.AsString()
				}
			default:
				c, f, ok := strings.Cut(strings.TrimPrefix(field, "tool_calls."), ".")
				m, err := strconv.Atoi(c)
				if !strings.HasPrefix(field, "tool_calls.") || !ok || err != nil {
					return true
				}
				call := s.calls[m]
				if call == nil {
					call = &sdk.ToolCall{}
					s.calls[m] = call
				}
				switch f {
				case "id":
					call.ID = v.AsString()
				case "name":
					call.Name = v.AsString()
				case "arguments":
					call.Arguments = v.AsString()
				}
			}
			return true
		})
		return slots, finish
	}
	ordered := func(slots map[int]*slot) []sdk.Turn {
		idx := make([]int, 0, len(slots))
		for n := range slots {
			idx = append(idx, n)
		}
		sort.Ints(idx)
		out := make([]sdk.Turn, 0, len(idx))
		for _, n := range idx {
			s := slots[n]
			calls := make([]int, 0, len(s.calls))
			for m := range s.calls {
				calls = append(calls, m)
			}
			sort.Ints(calls)
			for _, m := range calls {
				s.turn.ToolCalls = append(s.turn.ToolCalls, *s.calls[m])
			}
			out = append(out, s.turn)
		}
		return out
	}
	p, _ := read("gen_ai.prompt.")
	c, finish := read("gen_ai.completion.")
	if len(c) == 0 {
		return ordered(p), nil, ""
	}
	completion = ordered(c)
	for i := range completion {
		if completion[i].Role == "" {
			completion[i].Role = "assistant"
		}
	}
	return ordered(p), completion, finish
}

func toolCallOf(sp ptrace.Span) sdk.ToolCall {
	a := sp.Attributes()
	return sdk.ToolCall{
		ID:        str(a, "gen_ai.tool.call.id"),
		Name:      firstNonEmpty(str(a, "gen_ai.tool.name"), sp.Name()),
		Arguments: valueJSONText(a, "gen_ai.tool.call.arguments"),
		Result:    valueJSONText(a, "gen_ai.tool.call.result"),
	}
}

// str returns an attribute as a string, or "".
func str(m pcommon.Map, k string) string {
	if v, ok := m.Get(k); ok {
		return v.AsString()
	}
	return ""
}

// valueJSONText returns a string attribute as it is and any other as its JSON text.
func valueJSONText(m pcommon.Map, k string) string {
	v, ok := m.Get(k)
	if !ok {
		return ""
	}
	if v.Type() == pcommon.ValueTypeStr {
		return v.Str()
	}
	b, err := json.Marshal(v.AsRaw())
	if err != nil {
		return v.AsString()
	}
	return string(b)
}

// attrJSON decodes an attribute that holds JSON: a string of JSON, as the conventions
// record it where attributes cannot be structured, or a structured value.
func attrJSON(m pcommon.Map, k string, dst any) error {
	v, ok := m.Get(k)
	if !ok {
		return nil
	}
	var raw []byte
	if v.Type() == pcommon.ValueTypeStr {
		raw = []byte(v.Str())
	} else {
		var err error
		if raw, err = json.Marshal(v.AsRaw()); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return fmt.Errorf("%s: not the convention's JSON: %w", k, err)
	}
	return nil
}

// rawText returns a JSON string's value, any other JSON value as its text, null as "".
func rawText(raw json.RawMessage) string {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return ""
	}
	var v string
	if json.Unmarshal(raw, &v) == nil {
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
