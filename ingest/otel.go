package ingest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

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
