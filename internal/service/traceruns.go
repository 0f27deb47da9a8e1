package service

import (
	"context"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/scorekit/scorekit/ingest"
	"github.com/scorekit/scorekit/internal/service/redact"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/sdk"
)

// agentRunItems makes the runs of the fresh agent spans (agents, by trace/span) of the
// traces in agentTraces, from the request's spans (td) and the spans (stored, read with
// their bodies for these traces) and log records kept of those traces, as runs to store,
// each with what redaction replaced in its kept spans and records. It returns them with
// the agent span of each (by its position), and adds to logged the spans that have log
// records waiting. The runs are typed all the way to the store (storeRuns): a span
// becomes a run once.
func (s *Service) agentRunItems(ctx context.Context, t store.Tenant, td ptrace.Traces, stored []store.OpenSpan, requested map[string]bool,
	agentTraces []string, agents map[string]bool, nodes map[string]spanNode, now time.Time, res *TracesResult, tally *ingestTally,
	logged map[string]bool) ([]runItem, []string, error) {
	if len(agentTraces) == 0 {
		return nil, nil, nil
	}
	var logs []store.OpenLog
	if has, err := s.st.HasOpenLogs(ctx, t.ID); err != nil {
		return nil, nil, err
	} else if has {
		if logs, err = s.st.OpenLogs(ctx, t.ID, agentTraces, now, true); err != nil {
			return nil, nil, err
		}
	}
	for _, l := range logs {
		if len(l.Record) > 0 {
			logged[l.TraceID+"/"+l.SpanID] = true
		}
	}
	redacted := map[string]redact.Counts{} // by run id
	count := func(trace, span string, c redact.Counts) {
		if key, _, ok := nearestAgent(nodes, trace, span); ok || agents[trace+"/"+span] {
			if !ok {
				key = trace + "/" + span
			}
			run := strings.Replace(key, "/", "-", 1) // ingest.RunID of the agent span
			if redacted[run] == nil {
				redacted[run] = redact.Counts{}
			}
			for kind, n := range c {
				redacted[run][kind] += n
			}
		}
	}
	// The request's spans as they came (only the agent spans of agentTraces make runs),
	// then the kept spans of those traces that the request does not hold again.
	var set ingest.Spans
	set.AddTraces(td)
	kept := ptrace.NewTraces()
	for _, o := range stored {
		if len(o.Span) == 0 || requested[o.TraceID+"/"+o.SpanID] { // no body (in a run already, or not read), or in the request
			continue
		}
		one, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(o.Span)
		if err != nil {
			return nil, nil, fmt.Errorf("service: kept span %s of trace %s does not decode: %w", o.SpanID, o.TraceID, err)
		}
		// What redaction replaced while the span waited counts for the run it joins.
		if c := takeRedacted(one); len(c) > 0 {
			count(o.TraceID, o.SpanID, c)
		}
		one.ResourceSpans().MoveAndAppendTo(kept.ResourceSpans())
	}
	set.AddTraces(kept)
	if len(logs) > 0 {
		ld, counts, err := keptLogs(logs)
		if err != nil {
			return nil, nil, err
		}
		for k, c := range counts {
			trace, span, _ := strings.Cut(k, "/")
			count(trace, span, c)
		}
		set.AddLogs(ld)
	}
	var (
		items   []runItem
		spanIDs []string // the agent span of each item
	)
	want := func(sp ptrace.Span) bool {
		return agents[sp.TraceID().String()+"/"+sp.SpanID().String()]
	}
	err := set.AgentRuns(want, ingest.Options{OnError: func(_ int, err error) {
		res.reject(1, err.Error())
		tally.drop("span", DropNoOutput, 1, traceOfError(err, agentTraces))
	}}, func(r sdk.Run) error {
		if r.Agent == "" {
			res.reject(1, fmt.Sprintf("agent span %s names no agent: set gen_ai.agent.name, name the span \"invoke_agent NAME\", "+
				"or name the service (OTEL_SERVICE_NAME)", r.Metadata["span_id"]))
			tally.drop("span", DropNoOutput, 1, fmt.Sprint(r.Metadata["trace_id"]))
			return nil
		}
		items = append(items, runItem{line: len(items) + 1, run: r, redacted: redacted[r.ID]})
		spanIDs = append(spanIDs, fmt.Sprint(r.Metadata["span_id"]))
		return nil
	})
	return items, spanIDs, err
}

// nearestAgent walks up from a span to the nearest agent span known, and returns its
// key (trace/span) and node.
func nearestAgent(nodes map[string]spanNode, trace, id string) (string, spanNode, bool) {
	seen := map[string]bool{}
	for n, ok := nodes[trace+"/"+id]; ok && n.parent != ""; {
		key := trace + "/" + n.parent
		if seen[key] {
			return "", spanNode{}, false // a cycle of parent links: no agent above
		}
		seen[key] = true
		if n, ok = nodes[key]; ok && n.agent {
			return key, n, true
		}
	}
	return "", spanNode{}, false
}
