package ingest

import (
	"errors"
	"sort"
	"strings"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/scorekit/scorekit/sdk"
)

type otelSpan struct {
	span    ptrace.Span
	id      string // trace/span
	record  int
	service string
	role    Role
	parent  *otelSpan
	logs    []event // the log records joined to it
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
	m := sp.messages()
	ex := &exchange{record: sp.record, id: RunID(sp.span), agent: str(sp.span.Attributes(), "gen_ai.agent.name")}
	ex.sent = m.input
	ex.errMsg = errorOf(sp.span)
	if m.output == nil && ex.errMsg == "" {
		return nil, errNoOutput
	}
	if m.output != nil {
		reply := sdk.Turn{Role: "assistant"}
		for _, t := range m.output {
			if t.Role == "assistant" {
				reply.Content = joinText(reply.Content, t.Content)
				reply.ToolCalls = append(reply.ToolCalls, t.ToolCalls...)
			}
		}
		ex.reply = &reply
		ex.more = len(reply.ToolCalls) > 0 && m.finish != "length"
	}
	sp.fill(ex, m.finish)
	return ex, nil
}

// fill sets what a span says about its call: model, finish reason, usage, latency, time,
// and the ids and attributes kept in metadata.
func (sp *otelSpan) fill(ex *exchange, finish string) {
	attrs := sp.span.Attributes()
	ex.model = modelOf(attrs)
	ex.finish = firstNonEmpty(finishOf(attrs), finish)
	ex.inTokens, ex.outTokens, ex.hasUsage = usageOf(attrs)
	if start, end := sp.span.StartTimestamp(), sp.span.EndTimestamp(); start != 0 && end >= start {
		ex.latencyMS, ex.hasLatency = float64(end-start)/1e6, true
	}
	if end := sp.span.EndTimestamp(); end != 0 {
		t := end.AsTime().UTC()
		ex.when = &t
	}
	op := str(attrs, "gen_ai.operation.name")
	if op == "" {
		op = firstNonEmpty(str(attrs, "ai.operationId"), strings.ToLower(str(attrs, "openinference.span.kind")),
			str(attrs, "traceloop.span.kind"), sp.role.String())
	}
	ex.meta = map[string]any{
		"trace_id":  sp.span.TraceID().String(),
		"span_id":   sp.span.SpanID().String(),
		"operation": op,
	}
	ex.facts = map[string]string{
		"provider": firstNonEmpty(str(attrs, "gen_ai.provider.name"), str(attrs, "gen_ai.system"), str(attrs, "llm.provider"),
			str(attrs, "llm.system"), str(attrs, "ai.model.provider")),
		"conversation_id": firstNonEmpty(str(attrs, "gen_ai.conversation.id"), str(attrs, "session.id")),
	}
}

var errNoOutput = errors.New("no output recorded (no gen_ai.output.messages, gen_ai.choice events or log records, " +
	"llm.output_messages, ai.response.text nor gen_ai.completion.* attributes): recording message content is opt-in in most " +
	"instrumentations (for OpenTelemetry's, set OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true)")

// run reads a run's span as one run, with the model calls and tool calls below it.
func (sp *otelSpan) run(calls, tools []*otelSpan, o *Options) (sdk.Run, error) {
	own := sp.messages()
	input, output, finish := own.input, own.output, own.finish
	calls = byStart(calls)
	if output == nil {
		// The model calls' conversation: their rounds joined into turns, the first turn's
		// input and every turn's answers.
		var exs []*exchange
		for _, c := range calls {
			if ex, err := c.exchange(); err == nil {
				exs = append(exs, ex)
			}
		}
		var turns []*pendingTurn
		j := newJoiner(&Options{}, nil)
		j.onTurn = func(t *pendingTurn) error { turns = append(turns, t); return nil }
		pos := map[*exchange]int{}
		for i, ex := range exs {
			pos[ex] = i
			_ = j.add(ex) // onTurn never fails
		}
		_ = j.finish()
		sort.SliceStable(turns, func(a, b int) bool { return pos[turns[a].first] < pos[turns[b].first] })
		for i, t := range turns {
			if len(t.input) > 0 && (input == nil || !hasUser(input)) {
				input = t.input
			}
			for k, turn := range t.output {
				last := i == len(turns)-1 && k == len(t.output)-1
				if turn.Role == "assistant" && turn.Content == "" && len(turn.ToolCalls) == 0 && !last {
					continue // an empty round on the way (a framework's step that only ran a tool)
				}
				output = append(output, turn)
			}
		}
		if len(exs) > 0 && finish == "" {
			finish = exs[len(exs)-1].finish
		}
		if !hasUser(input) || output == nil {
			ownIn, ownOut := ownMessages(sp.span.Attributes())
			if output == nil {
				output = ownOut
			}
			if !hasUser(input) {
				input = mergeInput(input, mergeInput(own.sys, ownIn))
			}
		}
	}
	errMsg := errorOf(sp.span)
	if output == nil && errMsg == "" {
		return sdk.Run{}, errNoOutput
	}
	ex := &exchange{record: sp.record, errMsg: errMsg}
	sp.fill(ex, finish)
	t := &pendingTurn{first: ex, last: ex, rounds: 1, input: input, output: output}
	t.inTok, t.outTok, t.usage = ex.inTokens, ex.outTokens, ex.hasUsage
	// From the calls' attributes: the sum of their usage when the run's span has none of
	// its own, the last call's model and finish reason when it names none.
	if !ex.hasUsage {
		for _, c := range calls {
			if in, out, ok := usageOf(c.span.Attributes()); ok {
				t.inTok, t.outTok, t.usage = t.inTok+in, t.outTok+out, true
			}
		}
	}
	for i := len(calls) - 1; i >= 0 && ex.model == ""; i-- {
		ex.model = modelOf(calls[i].span.Attributes())
	}
	if ex.finish == "" && len(calls) > 0 {
		ex.finish = finishOf(calls[len(calls)-1].span.Attributes())
	}
	t.lat, t.hasLat = ex.latencyMS, ex.hasLatency
	run, err := t.run("")
	if err != nil {
		return sdk.Run{}, err
	}
	tcs := toolCallsOf(tools)
	if len(run.ToolCalls) == 0 {
		run.ToolCalls = tcs
	} else {
		addResults(run.ToolCalls, tcs)
	}
	run.ID = RunID(sp.span)
	run.Agent = firstNonEmpty(sp.agentName(), o.Agent, sp.service)
	return run, nil
}

// agentName is the agent a run's span names: gen_ai.agent.name, else the convention's
// own name.
func (sp *otelSpan) agentName() string {
	attrs := sp.span.Attributes()
	if n := firstNonEmpty(str(attrs, "gen_ai.agent.name"), str(attrs, "traceloop.workflow.name"),
		str(attrs, "traceloop.entity.name"), str(attrs, "ai.telemetry.functionId")); n != "" {
		return n
	}
	name := sp.span.Name()
	if rest, ok := strings.CutPrefix(name, "invoke_agent "); ok {
		return rest
	}
	if sp.role == RoleAgent && str(attrs, "gen_ai.operation.name") == "" {
		return strings.TrimSuffix(name, ".agent") // an OpenInference AGENT is named after its agent
	}
	return ""
}

// hasUser reports whether turns hold a user turn.
func hasUser(turns []sdk.Turn) bool {
	for _, t := range turns {
		if t.Role == "user" {
			return true
		}
	}
	return false
}

// mergeInput lays a span's own input (its system instructions, its user message) under
// what the model calls gave: the calls' turns first, then those of the span's own roles
// they lack.
func mergeInput(calls, own []sdk.Turn) []sdk.Turn {
	if len(calls) == 0 {
		return own
	}
	has := map[string]bool{}
	for _, t := range calls {
		has[t.Role] = true
	}
	out := append([]sdk.Turn(nil), calls...)
	for _, t := range own {
		if !has[t.Role] {
			out = append(out, t)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Role == "system" && out[j].Role != "system" })
	return out
}
