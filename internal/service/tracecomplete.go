package service

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/scorekit/scorekit/ingest"
	"github.com/scorekit/scorekit/internal/service/redact"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/sdk"
)

// DefaultTraceQuiet is Config.TraceQuiet's default: a batch span processor exports
// every 5 seconds (OTEL_BSP_SCHEDULE_DELAY), so a trace whose root came and whose spans
// and records stopped for longer than that is complete.
const DefaultTraceQuiet = 6 * time.Second

// traceSweepLimit bounds the traces one sweep completes; the next sweep takes the rest.
const traceSweepLimit = 500

// CompleteTraces makes the runs that need a whole trace (ingest.Spans.TraceRuns: a call
// span such as the AI SDK's ai.generateText where no agent span stands above or below
// it, an OpenInference CHAIN at the root, a traceloop workflow, and the model calls no
// agent or call span holds, joined into turns) of every tenant's open traces that are
// complete: their root span came and nothing came for Config.TraceQuiet, or their window
// (Config.TraceWindow) ends within the quiet. Of servers that find a trace due at once,
// one makes its runs (store.ClaimTrace). Once made, the trace's kept spans and records
// keep only their ids: one that comes later is rejected (late), one sent again is taken
// without effect. Spans and records that made or joined no run are counted with the
// reason. The spans and records of traces whose window ended are deleted, and those
// still waiting counted (window_ended). A River job runs it every Jobs.TraceInterval on
// the leading process of those that work jobs; it returns how many runs it stored.
func (s *Service) CompleteTraces(ctx context.Context, now time.Time) (int, error) {
	due, err := s.st.DueTraces(ctx, now.Add(-s.opts.TraceQuiet), now.Add(s.opts.TraceQuiet), traceSweepLimit)
	if err != nil {
		return 0, err
	}
	byTenant, order := groupBy(due, func(d store.DueTrace) int64 { return d.TenantID })
	stored := 0
	var errs []error
	for _, id := range order {
		t, err := s.st.TenantByID(ctx, id)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		n, err := s.completeTraces(ctx, t, byTenant[id], now)
		stored += n
		if err != nil {
			errs = append(errs, fmt.Errorf("service: complete traces of tenant %s: %w", t.Name, err))
		}
	}
	if err := s.expireOTLP(ctx, now); err != nil {
		errs = append(errs, err)
	}
	return stored, errors.Join(errs...)
}

// completeTraces makes the whole-trace runs of the tenant's due traces it claims.
func (s *Service) completeTraces(ctx context.Context, t store.Tenant, due []store.DueTrace, now time.Time) (int, error) {
	var traces []string
	for _, d := range due {
		ok, err := s.st.ClaimTrace(ctx, t.ID, d.TraceID, now, now.Add(s.opts.TraceWindow))
		if err != nil {
			return 0, err
		}
		if ok {
			traces = append(traces, d.TraceID)
		}
	}
	if len(traces) == 0 {
		return 0, nil
	}
	release := func() {
		for _, id := range traces {
			_ = s.st.ReleaseTrace(context.WithoutCancel(ctx), t.ID, id) // tried again at the next sweep
		}
	}
	var tally ingestTally
	set, redacted, kept, logs, err := s.keptTraces(ctx, t, traces, now)
	if err != nil {
		release()
		return 0, err
	}
	// What redaction replaced in the spans and records of a trace counts for its first run.
	byTrace := map[string]redact.Counts{}
	for k, c := range redacted {
		trace, _, _ := strings.Cut(k, "/")
		if byTrace[trace] == nil {
			byTrace[trace] = redact.Counts{}
		}
		for kind, n := range c {
			byTrace[trace][kind] += n
		}
	}
	var items []runItem
	o := ingest.Options{OnError: func(int, error) {}} // counted below, as unused
	err = set.TraceRuns(o, func(r sdk.Run) error {
		trace := fmt.Sprint(r.Metadata["trace_id"])
		if r.Agent == "" {
			tally.drop("span", DropNoOutput, 1, trace)
			return nil
		}
		items = append(items, runItem{line: len(items) + 1, run: r, redacted: byTrace[trace]})
		delete(byTrace, trace)
		return nil
	})
	if err != nil {
		release()
		return 0, err
	}
	// Made: what the traces kept keeps only its ids, in the runs' transaction.
	var bodies []store.OpenSpan
	for _, o := range kept {
		if len(o.Span) > 0 {
			bodies = append(bodies, o)
		}
	}
	var spans []string
	for _, l := range logs {
		if len(l.Record) > 0 {
			spans = append(spans, l.TraceID+"/"+l.SpanID)
		}
	}
	drop := func(ctx context.Context, tx *store.Tx) error {
		if err := tx.DropSpanBodies(ctx, t.ID, bodies); err != nil {
			return err
		}
		return tx.DropLogRecords(ctx, t.ID, spans)
	}
	stored := 0
	if len(items) > 0 {
		imp, err := s.storeRuns(ctx, t, items, storeOptions{inTx: func(ctx context.Context, tx *store.Tx, _ *ImportResult) error {
			return drop(ctx, tx)
		}})
		if err != nil {
			release()
			return 0, err
		}
		for _, ir := range imp.Runs {
			trace, _, _ := strings.Cut(ir.ID, "-")
			switch ir.Status {
			case RunStored:
				stored++
			case RunRejected, RunDeleted:
				tally.drop("span", DropNoOutput, 1, trace)
			}
		}
		tally.add("runs", imp.Stored)
	} else if err := s.st.InTx(ctx, func(tx *store.Tx) error { return drop(ctx, tx) }); err != nil {
		return 0, err
	}
	ended := map[string]bool{}
	for _, d := range due {
		ended[d.TraceID] = d.Ended
	}
	for trace, c := range set.Unused() {
		reason := DropNoOutput
		if ended[trace] {
			reason = DropWindowEnded
		}
		tally.drop("span", reason, c, trace)
	}
	for trace, c := range set.Unjoined() {
		tally.drop("log_record", DropNoSpan, c, trace)
	}
	return stored, s.saveTally(ctx, t, &tally)
}

// DropNoSpan: a log record whose span never came while its trace was open.
const DropNoSpan = "no_span"

// keptTraces reads the tenant's kept spans and log records of traces into a set for the
// reader: spans kept whole as they came, spans kept without their body (agent spans, and
// the spans their runs used) as links (an agent span still counts as one, so that the
// call spans above or below it make no run of their own), and what redaction replaced,
// by trace/span.
func (s *Service) keptTraces(ctx context.Context, t store.Tenant, traces []string, now time.Time) (*ingest.Spans, map[string]redact.Counts, []store.OpenSpan, []store.OpenLog, error) {
	kept, err := s.st.OpenSpans(ctx, t.ID, traces, now.Add(-s.opts.TraceQuiet), true)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	logs, err := s.st.OpenLogs(ctx, t.ID, traces, now.Add(-s.opts.TraceQuiet), true)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	var set ingest.Spans
	redacted := map[string]redact.Counts{}
	td := ptrace.NewTraces()
	for _, o := range kept {
		if len(o.Span) == 0 {
			one := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
			var tid pcommon.TraceID
			var sid, pid pcommon.SpanID
			_ = decodeHex(tid[:], o.TraceID)
			_ = decodeHex(sid[:], o.SpanID)
			one.SetTraceID(tid)
			one.SetSpanID(sid)
			if o.ParentSpanID != "" && decodeHex(pid[:], o.ParentSpanID) {
				one.SetParentSpanID(pid)
			}
			if o.Agent {
				one.Attributes().PutStr("gen_ai.operation.name", ingest.OpInvokeAgent)
			}
			continue
		}
		one, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(o.Span)
		if err != nil {
			return nil, nil, nil, nil, fmt.Errorf("service: kept span %s of trace %s does not decode: %w", o.SpanID, o.TraceID, err)
		}
		if c := takeRedacted(one); len(c) > 0 {
			redacted[o.TraceID+"/"+o.SpanID] = c
		}
		one.ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
	}
	set.AddTraces(td)
	ld, logCounts, err := keptLogs(logs)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	for k, c := range logCounts {
		if redacted[k] == nil {
			redacted[k] = redact.Counts{}
		}
		for kind, n := range c {
			redacted[k][kind] += n
		}
	}
	set.AddLogs(ld)
	return &set, redacted, kept, logs, nil
}

// traceOfError finds the trace a reader's error names, among traces.
func traceOfError(err error, traces []string) string {
	msg := err.Error()
	for _, id := range traces {
		if strings.Contains(msg, id) {
			return id
		}
	}
	if len(traces) == 1 {
		return traces[0]
	}
	return ""
}

// expireOTLP counts what waited until its trace's window ended (window_ended), then
// deletes the expired spans, log records and open traces.
func (s *Service) expireOTLP(ctx context.Context, now time.Time) error {
	expired, err := s.st.ExpiredWaiting(ctx, now)
	if err != nil {
		return err
	}
	tallies := map[int64]*ingestTally{}
	for _, e := range expired {
		if tallies[e.TenantID] == nil {
			tallies[e.TenantID] = &ingestTally{}
		}
		tallies[e.TenantID].drop(e.Signal, DropWindowEnded, int(e.N), e.TraceID)
	}
	var errs []error
	for id, tally := range tallies {
		t, err := s.st.TenantByID(ctx, id)
		if err != nil {
			continue // deleted meanwhile
		}
		errs = append(errs, s.saveTally(ctx, t, tally))
	}
	if _, err := s.st.DeleteExpiredSpans(ctx, now); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, s.st.DeleteExpiredOTLP(ctx, now))
	return errors.Join(errs...)
}

// decodeHex fills dst from hex text of its length; false when it is not.
func decodeHex(dst []byte, s string) bool {
	n, err := hex.Decode(dst, []byte(s))
	return err == nil && n == len(dst)
}
