package ingest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sort"
	"strings"
	"sync"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/scorekit/scorekit/sdk"
)

// OTelGenAI converts OpenTelemetry traces of GenAI instrumentations. The input is OTLP
// JSON, as the OpenTelemetry Collector's file exporter or an exporter's request body has
// it: one ExportTraceServiceRequest per line, or one document; an ExportLogsServiceRequest
// among them (or in Options.Logs) brings the GenAI events that instrumentations such as
// OpenTelemetry's own record as log records, joined to their spans by trace and span id.
// It is read with the Collector's own data model (go.opentelemetry.io/collector/pdata),
// which knows OTLP JSON's rules (hex trace and span ids, 64-bit integers as strings).
//
// The conventions read, each span by its [Role] (see [SpanRole]): the OpenTelemetry GenAI
// conventions (gen_ai.* attributes, span events and log records), OpenInference
// (openinference.span.kind, llm.input_messages, input.value ...), OpenLLMetry
// (traceloop.span.kind, gen_ai.prompt.N ...), the AI SDK (ai.generateText and its
// ai.* attributes) and Mastra (invoke_agent spans with mastra.agent_run.*). A value in an
// unexpected form (plain text where a convention says JSON) is read as text.
//
// What a run is:
//
//   - every agent span makes a run (gen_ai.operation.name invoke_agent, an OpenInference
//     AGENT, a traceloop agent), nested ones included, from the model calls and tool
//     calls below it down to the next agent span; its metadata names the span it ran
//     under (parent_span_id);
//   - where no agent span stands above or below it, a call span makes the run: the AI
//     SDK's ai.generateText (streamText, generateObject, streamObject), an OpenInference
//     CHAIN at the root of its trace, a traceloop workflow;
//   - the model calls that none of those hold are joined into turns, one run per turn, for
//     each root of the trace on its own (see the package documentation).
//
// A run's id is the trace and span id of the span that makes it, or of its first model
// call for a joined turn ([RunID]). Its input is the conversation its first model call was
// given, its output the answers up to the last model call's, its tool calls every call the
// model asked for with the result of its tool span or of the tool message that answered
// it. An agent span's own conversation (gen_ai.input.messages and gen_ai.output.messages)
// comes first; a span's own input and output in another convention (input.value,
// traceloop.entity.input, mastra.agent_run.input, ai.prompt ...) is used where its model
// calls record none. Metadata keeps the trace and span ids, the operation, model,
// provider, conversation id, token usage (the run span's own totals, else the sum over its
// model calls), latency (latency_ms, the span's duration), the finish reason (which the
// pre-screen reads) and, for a span whose status is an error, the error (its status
// message, else its exception event, else error.type): an agent that crashed before it
// answered is a run with an empty output and the error. The agent is gen_ai.agent.name,
// else the convention's own name (traceloop.workflow.name or entity name,
// ai.telemetry.functionId, an agent span's name), else Options.Agent, else the resource's
// service.name. The run's time is the span's end.
func OTelGenAI(r io.Reader, o Options, emit func(sdk.Run) error) error {
	var set Spans
	if err := set.read(r, &o, ""); err != nil {
		return err
	}
	if o.Logs != nil {
		if err := set.read(o.Logs, &o, "logs: "); err != nil {
			return err
		}
	}
	if o.ignored != nil {
		o.ignored(set.noContext)
	}
	set.link()
	if !set.hasGenAI() {
		return errors.New("no GenAI spans: no span is an agent, a model call or a call of an agent framework " +
			"(gen_ai.operation.name, openinference.span.kind, traceloop.span.kind, ai.generateText ...)")
	}
	if err := set.agentRuns(nil, &o, emit); err != nil {
		return err
	}
	return set.traceRuns(&o, emit)
}

// read adds the records of r: traces, and logs (a record with resourceLogs).
func (set *Spans) read(r io.Reader, o *Options, what string) error {
	return records(r, o, func(n int, raw []byte) error {
		if bytes.Contains(raw, []byte(`"resourceLogs"`)) && !bytes.Contains(raw, []byte(`"resourceSpans"`)) {
			ld, err := (&plog.JSONUnmarshaler{}).UnmarshalLogs(raw)
			if err != nil {
				return o.report(n, fmt.Errorf("%snot OTLP JSON logs: %w", what, err))
			}
			set.AddLogs(ld)
			return nil
		}
		td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(raw)
		if err != nil {
			return o.report(n, fmt.Errorf("%snot OTLP JSON traces: %w", what, err))
		}
		set.add(td, n)
		return nil
	})
}

// Spans is spans and GenAI log records read so far, which the reader makes runs from:
// agent spans' runs as they arrive ([Spans.AgentRuns]), the runs that need their whole
// trace when it is complete ([Spans.TraceRuns]).
type Spans struct {
	spans []*otelSpan
	byID  map[string]*otelSpan
	// events are the log records joined to spans, by trace/span.
	events map[string][]event
	// noContext counts log records with no trace or span id, which join nothing.
	noContext int
	linked    bool
	// used are the spans the runs made so far used.
	used map[*otelSpan]bool
}

func (set *Spans) use(spans ...*otelSpan) {
	if set.used == nil {
		set.used = map[*otelSpan]bool{}
	}
	for _, sp := range spans {
		set.used[sp] = true
	}
}

// Unused counts, by trace id, the spans the reader reads (model and tool calls, call
// spans; not agent spans) that no run made so far used: a model call that recorded no
// output, a tool call no run holds.
func (set *Spans) Unused() map[string]int {
	out := map[string]int{}
	for _, sp := range set.spans {
		switch {
		case set.used[sp], sp.role == RoleAgent, !sp.role.Reads():
		case sp.role == RoleChain && !sp.span.ParentSpanID().IsEmpty():
		case sp.above(RoleAgent) != nil && set.used[sp.above(RoleAgent)]:
		default:
			out[sp.span.TraceID().String()]++
		}
	}
	return out
}

// AddTraces adds td's spans.
func (set *Spans) AddTraces(td ptrace.Traces) { set.add(td, 0); set.linked = false }

// AddLogs adds ld's log records, each to the span of its trace and span id; it returns how
// many had no span context (they join nothing and are not kept).
func (set *Spans) AddLogs(ld plog.Logs) int {
	if set.events == nil {
		set.events = map[string][]event{}
	}
	n := 0
	for _, rl := range ld.ResourceLogs().All() {
		for _, sl := range rl.ScopeLogs().All() {
			for _, lr := range sl.LogRecords().All() {
				if lr.TraceID().IsEmpty() || lr.SpanID().IsEmpty() {
					n++
					continue
				}
				k := lr.TraceID().String() + "/" + lr.SpanID().String()
				set.events[k] = append(set.events[k], logEvent(lr))
			}
		}
	}
	set.noContext += n
	return n
}

// add adds td's spans, read from record n.
func (set *Spans) add(td ptrace.Traces, n int) {
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
				sp.role = SpanRole(sp.span)
				sp.id = sp.key(sp.span.SpanID().String())
				if set.byID[sp.id] != nil {
					continue // sent twice
				}
				set.spans = append(set.spans, sp)
				set.byID[sp.id] = sp
			}
		}
	}
}

// link points each span at its parent, when the set has it, and at the log records
// joined to it.
func (set *Spans) link() {
	if set.linked {
		return
	}
	set.linked = true
	for _, sp := range set.spans {
		sp.parent = nil
		if p := sp.span.ParentSpanID(); !p.IsEmpty() {
			sp.parent = set.byID[sp.key(p.String())]
		}
		if evs := set.events[sp.id]; len(evs) > 0 {
			sort.SliceStable(evs, func(i, j int) bool { return evs[i].time < evs[j].time })
			sp.logs = evs
		}
	}
}

// Unjoined counts, by trace id, the log records whose span the set does not hold.
func (set *Spans) Unjoined() map[string]int {
	out := map[string]int{}
	for k, evs := range set.events {
		if set.byID[k] == nil {
			trace, _, _ := strings.Cut(k, "/")
			out[trace] += len(evs)
		}
	}
	return out
}

func (set *Spans) hasGenAI() bool {
	for _, sp := range set.spans {
		if sp.role == RoleModel || sp.role.makesRun() {
			return true
		}
	}
	return false
}

// AgentRuns makes a run of each agent span for which want is true (every one when want
// is nil), with the tool and model call spans below it down to the next agent span. What
// a run holds depends only on its agent span and the spans below it, never on the spans
// above, which may not have arrived. An agent span that cannot be made a run is reported
// to o.OnError with its record (0 for spans added by AddTraces), or returned when OnError
// is nil.
func (set *Spans) AgentRuns(want func(ptrace.Span) bool, o Options, emit func(sdk.Run) error) error {
	set.link()
	return set.agentRuns(want, &o, emit)
}

func (set *Spans) agentRuns(want func(ptrace.Span) bool, o *Options, emit func(sdk.Run) error) error {
	calls := map[*otelSpan][]*otelSpan{} // agent span -> the model calls below it
	tools := map[*otelSpan][]*otelSpan{}
	for _, sp := range set.spans {
		if sp.role != RoleModel && sp.role != RoleTool {
			continue
		}
		if a := sp.above(RoleAgent); a != nil {
			if sp.role == RoleTool {
				tools[a] = append(tools[a], sp)
			} else {
				calls[a] = append(calls[a], sp)
			}
		}
	}
	var agents []*otelSpan
	for _, sp := range set.spans {
		if sp.role == RoleAgent && (want == nil || want(sp.span)) {
			agents = append(agents, sp)
		}
	}
	// Reading a span's messages is most of a run's cost, and one agent's run reads only its
	// own spans: the runs are read on every CPU, then emitted in order.
	type read struct {
		run sdk.Run
		err error
	}
	runs := make([]read, len(agents))
	inParallel(len(agents), func(i int) {
		sp := agents[i]
		runs[i].run, runs[i].err = sp.run(calls[sp], tools[sp], o)
	})
	for i, sp := range agents {
		if err := set.emitRead(sp, runs[i].run, runs[i].err, calls[sp], tools[sp], o, emit); err != nil {
			return err
		}
	}
	return nil
}

// inParallel calls f(0) ... f(n-1) on every CPU, or in turn when n is small.
func inParallel(n int, f func(int)) {
	workers := min(runtime.GOMAXPROCS(0), n/32+1)
	if workers <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				f(i)
			}
		}()
	}
	wg.Wait()
}

// TraceRuns makes the runs that need the whole trace, for spans that are all of their
// traces: a call span's where no agent span stands above or below it (the AI SDK's
// ai.generateText, an OpenInference CHAIN at the root, a traceloop workflow), and the
// turns of the model calls that no agent or call span holds, joined for each root of a
// trace on its own. A span that cannot make a run is reported to o.OnError (record 0 for
// spans added by AddTraces), or returned when OnError is nil.
func (set *Spans) TraceRuns(o Options, emit func(sdk.Run) error) error {
	set.link()
	return set.traceRuns(&o, emit)
}

func (set *Spans) traceRuns(o *Options, emit func(sdk.Run) error) error {
	agentBelow := map[*otelSpan]bool{}
	for _, sp := range set.spans {
		if sp.role == RoleAgent {
			for p := sp.parent; p != nil && !agentBelow[p]; p = p.parent {
				agentBelow[p] = true
			}
		}
	}
	// The call spans that make runs: no agent above or below, none of them above.
	caller := map[*otelSpan]bool{}
	isCaller := func(sp *otelSpan) bool {
		return (sp.role == RoleCall || sp.role == RoleChain && sp.span.ParentSpanID().IsEmpty()) &&
			!agentBelow[sp] && sp.above(RoleAgent) == nil
	}
	for _, sp := range set.spans {
		if !isCaller(sp) {
			continue
		}
		outer := true
		for p := sp.parent; p != nil; p = p.parent {
			if isCaller(p) {
				outer = false
				break
			}
		}
		caller[sp] = outer
	}
	calls := map[*otelSpan][]*otelSpan{}
	tools := map[*otelSpan][]*otelSpan{}
	// The model calls no run's span holds are joined per root: the spans below a root
	// span on their own; the spans whose root is not known (their topmost span has a
	// parent not read) and model calls that are roots themselves together, per trace.
	type root struct{ calls, tools []*otelSpan }
	roots := map[string]*root{}
	var order []string
	for _, sp := range set.spans {
		if sp.role != RoleModel && sp.role != RoleTool || sp.above(RoleAgent) != nil {
			continue
		}
		var c *otelSpan
		for p := sp.parent; p != nil; p = p.parent {
			if caller[p] {
				c = p
				break
			}
		}
		switch {
		case c != nil && sp.role == RoleTool:
			tools[c] = append(tools[c], sp)
		case c != nil:
			calls[c] = append(calls[c], sp)
		default:
			t := sp.top()
			top := t.id
			if !t.span.ParentSpanID().IsEmpty() || t.role == RoleModel || t.role == RoleTool {
				top = sp.span.TraceID().String() + "/?"
			}
			r := roots[top]
			if r == nil {
				r = &root{}
				roots[top] = r
				order = append(order, top)
			}
			if sp.role == RoleTool {
				r.tools = append(r.tools, sp)
			} else {
				r.calls = append(r.calls, sp)
			}
		}
	}
	for _, sp := range set.spans {
		if caller[sp] {
			if err := set.emitRun(sp, calls[sp], tools[sp], o, emit); err != nil {
				return err
			}
		}
	}
	for _, top := range order {
		r := roots[top]
		if err := set.joinedRuns(r.calls, r.tools, o, emit); err != nil {
			return err
		}
	}
	return nil
}

// emitRun makes sp's run, from the model and tool calls given, and emits it; a span whose
// run cannot be made is reported.
func (set *Spans) emitRun(sp *otelSpan, calls, tools []*otelSpan, o *Options, emit func(sdk.Run) error) error {
	run, err := sp.run(calls, tools, o)
	return set.emitRead(sp, run, err, calls, tools, o, emit)
}

// emitRead emits sp's run as read (sp.run), or reports why it could not be made.
func (set *Spans) emitRead(sp *otelSpan, run sdk.Run, err error, calls, tools []*otelSpan, o *Options, emit func(sdk.Run) error) error {
	if err != nil {
		return o.report(sp.record, fmt.Errorf("span %s (%s, %s): %w", sp.span.SpanID(), sp.span.Name(), sp.role, err))
	}
	if p := sp.span.ParentSpanID(); !p.IsEmpty() {
		run.Metadata["parent_span_id"] = p.String()
	}
	set.use(sp)
	set.use(calls...)
	set.use(tools...)
	return emit(run)
}

// above is the nearest span of role above sp, or nil.
func (sp *otelSpan) above(role Role) *otelSpan {
	for a := sp.parent; a != nil; a = a.parent {
		if a.role == role {
			return a
		}
	}
	return nil
}

// top is the topmost span known above sp (sp itself at a root), within a bound: a cycle
// of parent links ends it.
func (sp *otelSpan) top() *otelSpan {
	t := sp
	for i := 0; t.parent != nil && i < 10000; i++ {
		t = t.parent
	}
	return t
}

// byStart sorts spans by start time, then as they came.
func byStart(spans []*otelSpan) []*otelSpan {
	out := append([]*otelSpan(nil), spans...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].span.StartTimestamp() < out[j].span.StartTimestamp() })
	return out
}

// joinedRuns makes runs from model call spans, joining the rounds of a turn; the tool
// spans beside them give results to the calls that have none.
func (set *Spans) joinedRuns(spans, tools []*otelSpan, o *Options, emit func(sdk.Run) error) error {
	if len(spans) == 0 {
		return nil
	}
	calls := byStart(spans)
	toolCalls := toolCallsOf(tools)
	agent := firstNonEmpty(o.Agent, calls[0].service)
	opts := Options{Agent: agent, OnError: o.OnError}
	j := newJoiner(&opts, func(r sdk.Run) error {
		addResults(r.ToolCalls, toolCalls)
		set.use(tools...)
		return emit(r)
	})
	for _, sp := range calls {
		ex, err := sp.exchange()
		if err != nil {
			if err := o.report(sp.record, fmt.Errorf("span %s (%s, %s): %w", sp.span.SpanID(), sp.span.Name(), sp.role, err)); err != nil {
				return err
			}
			continue
		}
		set.use(sp)
		if err := j.add(ex); err != nil {
			return err
		}
	}
	return j.finish()
}

// addResults gives the calls recorded without a result the result of the tool span with
// the same call id, else of the first tool span of the same name not yet used (tool spans
// without a call id: OpenInference's, traceloop's).
func addResults(calls, tools []sdk.ToolCall) {
	used := make([]bool, len(tools))
	for i := range calls {
		if calls[i].ID == "" {
			continue
		}
		for k, t := range tools {
			if !used[k] && t.ID == calls[i].ID {
				used[k] = true
				if calls[i].Result == "" {
					calls[i].Result = t.Result
				}
				break
			}
		}
	}
	for i := range calls {
		if calls[i].Result != "" {
			continue
		}
		for k, t := range tools {
			if !used[k] && t.ID == "" && t.Name == calls[i].Name {
				used[k] = true
				calls[i].Result = t.Result
				break
			}
		}
	}
}

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
