package ingest

import (
	"encoding/json"
	"errors"
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
// data model (go.opentelemetry.io/collector/pdata), which knows OTLP JSON's rules (hex
// trace and span ids, 64-bit integers as strings).
//
// Runs come from agent spans (gen_ai.operation.name invoke_agent) in the traces that have
// any: one run per agent span, whose id is the span's trace and span id ([RunID]); a
// nested agent is a run of its own, and every agent span's run names the span it ran
// under (metadata.parent_span_id, the span's own parent link, known from the span alone).
// The agent is gen_ai.agent.name, else the span name after "invoke_agent ", else
// Options.Agent, else the resource's service.name. In a trace without agent spans they come from model call
// spans (chat, text_completion, generate_content), whose rounds of one turn are joined
// into one run as for logs (see the package documentation). A span's conversation and output are read from
//
//   - gen_ai.system_instructions, gen_ai.input.messages and gen_ai.output.messages (the
//     conventions since v1.37: messages of typed parts), or
//   - span events, the earlier form: gen_ai.system.message, gen_ai.user.message,
//     gen_ai.assistant.message, gen_ai.tool.message and gen_ai.choice (their body in the
//     event's attributes, or as JSON in gen_ai.event.content), or gen_ai.content.prompt
//     and gen_ai.content.completion (gen_ai.prompt and gen_ai.completion), or
//   - gen_ai.prompt.N.* and gen_ai.completion.N.* (the indexed attributes of earlier
//     instrumentations such as OpenLLMetry);
//
// an agent span that records none is read from the last model call below it. An agent
// span whose messages carry no tool calls gets those of the execute_tool spans below it
// (gen_ai.tool.name, gen_ai.tool.call.id, .arguments, .result; a failed tool span's error
// as its result). Metadata keeps the trace and span ids, the operation, model, provider,
// conversation id, token usage, latency (latency_ms, the span's duration), the finish
// reason (which the pre-screen reads) and, for a span whose status is an error, the error
// (its status message, else its exception event, else error.type): an agent that crashed
// before it answered is a run with an empty output and the error, so the pre-screen and
// the insights see the crash. The run's time is the span's end.
func OTelGenAI(r io.Reader, o Options, emit func(sdk.Run) error) error {
	var set spanSet
	err := records(r, &o, func(n int, raw []byte) error {
		td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(raw)
		if err != nil {
			return o.report(n, fmt.Errorf("not OTLP JSON traces: %w", err))
		}
		set.add(td, n)
		return nil
	})
	if err != nil {
		return err
	}
	set.link()
	agentTraces := map[string]bool{}
	var rest []*otelSpan // the spans of traces without an agent span
	for _, sp := range set.spans {
		if sp.op == OpInvokeAgent {
			agentTraces[sp.span.TraceID().String()] = true
		}
	}
	for _, sp := range set.spans {
		if !agentTraces[sp.span.TraceID().String()] {
			rest = append(rest, sp)
		}
	}
	if len(agentTraces) == 0 && !hasModelCall(rest) {
		return fmt.Errorf("no GenAI spans: no span has gen_ai.operation.name invoke_agent, chat, text_completion or generate_content")
	}
	if err := set.agentRuns(nil, &o, emit); err != nil {
		return err
	}
	return modelCallRuns(rest, &o, emit)
}

// spanSet is the spans read so far, linked to their parents.
type spanSet struct {
	spans []*otelSpan
	byID  map[string]*otelSpan
}

// add adds td's spans, read from record n.
func (set *spanSet) add(td ptrace.Traces, n int) {
	if set.byID == nil {
		set.byID = map[string]*otelSpan{}
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
				sp.op = Operation(sp.span)
				set.spans = append(set.spans, sp)
				set.byID[sp.key(sp.span.SpanID().String())] = sp
			}
		}
	}
}

// link points each span at its parent, when the set has it.
func (set *spanSet) link() {
	for _, sp := range set.spans {
		if p := sp.span.ParentSpanID(); !p.IsEmpty() {
			sp.parent = set.byID[sp.key(p.String())]
		}
	}
}

// agentRuns makes a run of each agent span for which want is true (every one when want
// is nil), with the tool and model call spans below it down to the next agent span.
func (set *spanSet) agentRuns(want func(ptrace.Span) bool, o *Options, emit func(sdk.Run) error) error {
	tools := map[*otelSpan][]sdk.ToolCall{}
	calls := map[*otelSpan][]*otelSpan{} // agent span -> the model calls below it, in order
	for _, sp := range set.spans {
		if sp.op != "execute_tool" && !modelOps[sp.op] {
			continue
		}
		if a := sp.agent(); a != nil {
			if sp.op == "execute_tool" {
				tools[a] = append(tools[a], toolCallOf(sp.span))
			} else {
				calls[a] = append(calls[a], sp)
			}
		}
	}
	for _, sp := range set.spans {
		if sp.op != OpInvokeAgent || want != nil && !want(sp.span) {
			continue
		}
		run, err := sp.run(tools[sp], calls[sp])
		if err != nil {
			if err := o.report(sp.record, fmt.Errorf("span %s (%s): %w", sp.span.SpanID(), sp.op, err)); err != nil {
				return err
			}
			continue
		}
		if p := sp.span.ParentSpanID(); !p.IsEmpty() {
			run.Metadata["parent_span_id"] = p.String()
		}
		if run.Agent == "" {
			run.Agent = firstNonEmpty(o.Agent, sp.service)
		}
		if err := emit(run); err != nil {
			return err
		}
	}
	return nil
}

// agent is the nearest agent span above sp, or nil.
func (sp *otelSpan) agent() *otelSpan {
	for a := sp.parent; a != nil; a = a.parent {
		if a.op == OpInvokeAgent {
			return a
		}
	}
	return nil
}

func hasModelCall(spans []*otelSpan) bool {
	for _, sp := range spans {
		if modelOps[sp.op] {
			return true
		}
	}
	return false
}

// addResults gives the calls the messages recorded without a result the result of the
// execute_tool span with the same call id.
func addResults(calls, tools []sdk.ToolCall) {
	for i := range calls {
		if calls[i].Result != "" || calls[i].ID == "" {
			continue
		}
		for _, t := range tools {
			if t.ID == calls[i].ID {
				calls[i].Result = t.Result
				break
			}
		}
	}
}

// modelOps are the operations of model call spans.
var modelOps = map[string]bool{"chat": true, "text_completion": true, "generate_content": true}

// modelCallRuns makes runs from model call spans, joining the rounds of a turn.
func modelCallRuns(spans []*otelSpan, o *Options, emit func(sdk.Run) error) error {
	var calls []*otelSpan
	for _, sp := range spans {
		if modelOps[sp.op] {
			calls = append(calls, sp)
		}
	}
	sort.SliceStable(calls, func(i, j int) bool { return calls[i].span.StartTimestamp() < calls[j].span.StartTimestamp() })
	// One joiner per trace: rounds of one turn share it.
	joiners := map[string]*joiner{}
	var order []string
	for _, sp := range calls {
		ex, err := sp.exchange()
		if err != nil {
			if err := o.report(sp.record, fmt.Errorf("span %s (%s): %w", sp.span.SpanID(), sp.op, err)); err != nil {
				return err
			}
			continue
		}
		tid := sp.span.TraceID().String()
		j := joiners[tid]
		if j == nil {
			agent := firstNonEmpty(o.Agent, sp.service)
			opts := Options{Agent: agent, OnError: o.OnError}
			j = newJoiner(&opts, emit)
			joiners[tid] = j
			order = append(order, tid)
		}
		if err := j.add(ex); err != nil {
			return err
		}
	}
	for _, tid := range order {
		if err := joiners[tid].finish(); err != nil {
			return err
		}
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

// errorOf is a span's error: its status message, else its exception event's message,
// else error.type, else a note that the status says so; "" for a span that did not fail.
func errorOf(span ptrace.Span) string {
	if span.Status().Code() != ptrace.StatusCodeError {
		return ""
	}
	msg := span.Status().Message()
	evs := span.Events()
	for i := 0; msg == "" && i < evs.Len(); i++ {
		if e := evs.At(i); e.Name() == "exception" {
			msg = firstNonEmpty(str(e.Attributes(), "exception.message"), str(e.Attributes(), "exception.type"))
		}
	}
	return firstNonEmpty(msg, str(span.Attributes(), "error.type"), "the span's status is an error")
}

// exchange reads a model call span as one round.
func (sp *otelSpan) exchange() (*exchange, error) {
	attrs := sp.span.Attributes()
	input, output, finish, err := messagesOf(sp.span)
	if err != nil {
		return nil, err
	}
	ex := &exchange{record: sp.record, id: sp.span.SpanID().String(), agent: str(attrs, "gen_ai.agent.name")}
	ex.sent = input
	ex.errMsg = errorOf(sp.span)
	if output == nil && ex.errMsg == "" {
		return nil, errNoOutput
	}
	if output != nil {
		reply := sdk.Turn{Role: "assistant"}
		for _, t := range output {
			if t.Role == "assistant" {
				reply.Content = joinText(reply.Content, t.Content)
				reply.ToolCalls = append(reply.ToolCalls, t.ToolCalls...)
			}
		}
		ex.reply = &reply
		ex.more = len(reply.ToolCalls) > 0 && finish != "length"
	}
	sp.fill(ex, finish)
	return ex, nil
}

// fill sets what a span says about its call: model, finish reason, usage, latency, time,
// and the ids and attributes kept in metadata.
func (sp *otelSpan) fill(ex *exchange, finish string) {
	attrs := sp.span.Attributes()
	ex.model = firstNonEmpty(str(attrs, "gen_ai.response.model"), str(attrs, "gen_ai.request.model"))
	if v, ok := attrs.Get("gen_ai.response.finish_reason"); ok && finish == "" { // before v1.26
		finish = v.AsString()
	}
	if v, ok := attrs.Get("gen_ai.response.finish_reasons"); ok {
		if v.Type() == pcommon.ValueTypeSlice && v.Slice().Len() > 0 {
			finish = v.Slice().At(0).AsString()
		} else if v.Type() == pcommon.ValueTypeStr {
			finish = v.Str()
		}
	}
	ex.finish = finish
	in, okIn := numberAttr(attrs, "gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens")
	out, okOut := numberAttr(attrs, "gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens")
	if okIn || okOut {
		ex.inTokens, ex.outTokens, ex.hasUsage = in, out, true
	}
	if start, end := sp.span.StartTimestamp(), sp.span.EndTimestamp(); start != 0 && end >= start {
		ex.latencyMS, ex.hasLatency = float64(end-start)/1e6, true
	}
	if end := sp.span.EndTimestamp(); end != 0 {
		t := end.AsTime().UTC()
		ex.when = &t
	}
	ex.meta = map[string]any{
		"trace_id":  sp.span.TraceID().String(),
		"span_id":   sp.span.SpanID().String(),
		"operation": sp.op,
	}
	ex.facts = map[string]string{
		"provider":        firstNonEmpty(str(attrs, "gen_ai.provider.name"), str(attrs, "gen_ai.system")),
		"conversation_id": str(attrs, "gen_ai.conversation.id"),
	}
}

var errNoOutput = errors.New("no output recorded (no gen_ai.output.messages, gen_ai.choice events nor gen_ai.completion.* attributes): " +
	"recording message content is opt-in in most instrumentations (for OpenTelemetry's Python ones, set " +
	"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true)")

// run reads an agent span as one run, with the tool calls of the execute_tool spans below
// it and, when it records no messages itself, the last model call below it.
func (sp *otelSpan) run(tools []sdk.ToolCall, calls []*otelSpan) (sdk.Run, error) {
	input, output, finish, err := messagesOf(sp.span)
	if err != nil {
		return sdk.Run{}, err
	}
	if output == nil && len(calls) > 0 {
		last := calls[0]
		for _, c := range calls[1:] {
			if c.span.EndTimestamp() >= last.span.EndTimestamp() {
				last = c
			}
		}
		var sent, reply []sdk.Turn
		if sent, reply, finish, err = messagesOf(last.span); err == nil && reply != nil {
			var prior []sdk.Turn
			input, prior = splitOutput(sent)
			output = append(prior, reply...)
		}
	}
	errMsg := errorOf(sp.span)
	if output == nil && errMsg == "" {
		return sdk.Run{}, errNoOutput
	}
	ex := &exchange{record: sp.record, errMsg: errMsg}
	sp.fill(ex, finish)
	t := &pendingTurn{first: ex, last: ex, rounds: 1}
	t.input = input
	t.output = output
	t.inTok, t.outTok, t.usage = ex.inTokens, ex.outTokens, ex.hasUsage
	t.lat, t.hasLat = ex.latencyMS, ex.hasLatency
	run, err := t.run("")
	if err != nil {
		return sdk.Run{}, err
	}
	if len(run.ToolCalls) == 0 {
		run.ToolCalls = tools
	} else {
		addResults(run.ToolCalls, tools)
	}
	run.ID = RunID(sp.span)
	run.Agent = str(sp.span.Attributes(), "gen_ai.agent.name")
	if run.Agent == "" {
		name := sp.span.Name()
		if rest, ok := strings.CutPrefix(name, "invoke_agent "); ok {
			run.Agent = rest
		}
	}
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

// messagesOf reads a span's conversation and output, from the current conventions, span
// events or the indexed attributes. output is nil when the span recorded none.
func messagesOf(span ptrace.Span) (input, output []sdk.Turn, finish string, err error) {
	attrs := span.Attributes()
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
	if in, out, finish, ok := eventMessages(span.Events()); ok {
		return append(input, in...), out, finish, nil
	}
	prompt, completion, finish := indexed(attrs)
	if completion == nil {
		return nil, nil, "", nil
	}
	return append(input, prompt...), completion, finish, nil
}

// eventRoles are the message events of the conventions before v1.37, by the role they
// carry.
var eventRoles = map[string]string{
	"gen_ai.system.message":    "system",
	"gen_ai.user.message":      "user",
	"gen_ai.assistant.message": "assistant",
	"gen_ai.tool.message":      "tool",
}

// eventMessages reads messages recorded as span events: the message events and
// gen_ai.choice (the output), or gen_ai.content.prompt and gen_ai.content.completion.
// ok is false when the span has no choice or completion event.
func eventMessages(evs ptrace.SpanEventSlice) (input, output []sdk.Turn, finish string, ok bool) {
	for i := range evs.Len() {
		e := evs.At(i)
		name := e.Name()
		switch {
		case eventRoles[name] != "":
			body := eventBody(e.Attributes())
			input = append(input, bodyTurn(body, eventRoles[name]))
		case name == "gen_ai.choice":
			body := eventBody(e.Attributes())
			msg := body
			if m, isMap := decodeJSONValue(body["message"]).(map[string]any); isMap {
				msg = m
			}
			output = append(output, bodyTurn(msg, "assistant"))
			if f, _ := body["finish_reason"].(string); finish == "" {
				finish = f
			}
			ok = true
		case name == "gen_ai.content.prompt":
			input = append(input, messagesValue(e.Attributes(), "gen_ai.prompt", "user")...)
		case name == "gen_ai.content.completion":
			output = append(output, messagesValue(e.Attributes(), "gen_ai.completion", "assistant")...)
			ok = true
		}
	}
	return input, output, finish, ok
}

// eventBody is an event's body: its attributes, with the fields of a JSON object in
// gen_ai.event.content laid over them.
func eventBody(attrs pcommon.Map) map[string]any {
	body := attrs.AsRaw()
	if c, isMap := decodeJSONValue(body["gen_ai.event.content"]).(map[string]any); isMap {
		for k, v := range c {
			body[k] = v
		}
	}
	return body
}

// bodyTurn reads a message body ({role, content, tool_calls, id}) as a turn.
func bodyTurn(body map[string]any, role string) sdk.Turn {
	content, isText := body["content"].(string) // a tool's JSON result stays as written
	if !isText {
		content = textOf(body["content"])
	}
	t := sdk.Turn{Role: role, Content: content}
	if r, _ := body["role"].(string); r != "" && role == "assistant" {
		t.Role = r
	}
	if id, _ := body["id"].(string); role == "tool" {
		t.ToolCallID = id
	}
	if calls := decodeJSONValue(body["tool_calls"]); calls != nil {
		var tcs []sdk.ToolCall
		if json.Unmarshal(mustJSON(calls), &tcs) == nil {
			t.ToolCalls = tcs
		}
	}
	return t
}

// messagesValue reads an attribute that holds messages in OpenAI's shape (JSON text or a
// structured value), or plain text as one message of role.
func messagesValue(attrs pcommon.Map, key, role string) []sdk.Turn {
	v, ok := attrs.Get(key)
	if !ok {
		return nil
	}
	raw := decodeJSONValue(v.AsRaw())
	var turns []sdk.Turn
	if json.Unmarshal(mustJSON(raw), &turns) == nil {
		return turns
	}
	if s := textOf(raw); s != "" {
		return []sdk.Turn{{Role: role, Content: s}}
	}
	return nil
}

// decodeJSONValue reads a string that holds a JSON object or array as that value; any
// other value is returned as it is.
func decodeJSONValue(v any) any {
	s, ok := v.(string)
	if !ok {
		return v
	}
	t := strings.TrimSpace(s)
	if t == "" || t[0] != '{' && t[0] != '[' {
		return v
	}
	var out any
	if json.Unmarshal([]byte(t), &out) != nil {
		return v
	}
	return out
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

// toolCallOf reads an execute_tool span as a call; a span that failed without a result
// has its error as the result, {"error": ...}, which the scorers read as a failed call.
func toolCallOf(sp ptrace.Span) sdk.ToolCall {
	a := sp.Attributes()
	c := sdk.ToolCall{
		ID:        str(a, "gen_ai.tool.call.id"),
		Name:      firstNonEmpty(str(a, "gen_ai.tool.name"), strings.TrimPrefix(sp.Name(), "execute_tool ")),
		Arguments: valueJSONText(a, "gen_ai.tool.call.arguments"),
		Result:    valueJSONText(a, "gen_ai.tool.call.result"),
	}
	if e := errorOf(sp); e != "" && c.Result == "" {
		c.Result = jsonText(map[string]string{"error": e})
	}
	return c
}

// numberAttr returns the first of keys that holds a number.
func numberAttr(m pcommon.Map, keys ...string) (float64, bool) {
	for _, k := range keys {
		if v, ok := m.Get(k); ok && (v.Type() == pcommon.ValueTypeInt || v.Type() == pcommon.ValueTypeDouble) {
			return number(v), true
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
