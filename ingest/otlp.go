package ingest

import (
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/scorekit/scorekit/sdk"
)

// OpInvokeAgent is the gen_ai.operation.name of an agent span: each makes one run.
const OpInvokeAgent = "invoke_agent"

// Operation is a span's gen_ai.operation.name: "" for a span that is not a GenAI span.
func Operation(span ptrace.Span) string { return str(span.Attributes(), "gen_ai.operation.name") }

// RunID is the id of the run a span makes (an agent or call span, or a joined turn's first
// model call): its trace id and span id in hex,
// joined by "-". The same span always gives the same id, so a trace converted from a
// file and the same trace sent over OTLP make one run, not two.
func RunID(span ptrace.Span) string {
	return span.TraceID().String() + "-" + span.SpanID().String()
}

// AgentRuns makes runs from the agent spans of td as [OTelGenAI] does, for a caller that
// receives spans as they end (the service's OTLP/HTTP endpoint): td holds the spans known
// of the agent spans' traces, children first or with them. Only the agent spans for which
// want is true make runs (every one when want is nil); the others still hold the calls
// below them, so a nested agent's calls never count for the agent above it. An agent span
// that cannot be made a run is reported to o.OnError with record 0, or returned when
// OnError is nil. (A caller with log records too uses [Spans].)
func AgentRuns(td ptrace.Traces, want func(ptrace.Span) bool, o Options, emit func(sdk.Run) error) error {
	var set Spans
	set.AddTraces(td)
	return set.AgentRuns(want, o, emit)
}
