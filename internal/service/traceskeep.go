package service

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/scorekit/scorekit/ingest"
	"github.com/scorekit/scorekit/internal/service/redact"
	"github.com/scorekit/scorekit/internal/service/store"
)

// keptWrites is what a request writes of the spans it keeps, once it knows which agent
// spans made their runs (plan): the agent spans that did keep their ids (they find a
// late span, and are known if sent again); the kept spans that went into a run (used)
// and their log records keep only their ids too, which know them if they are sent again,
// and their bodies no longer count against the cap; and the traces with kept spans stay
// open for the window (open), when the request keeps anything.
type keptWrites struct {
	s      *Service
	t      store.Tenant
	stored []store.OpenSpan
	fresh  []*traceSpan
	agents map[string]bool
	nodes  map[string]spanNode
	now    time.Time
	// logged are the spans with log records waiting, by trace/span.
	logged map[string]bool

	out, used []store.OpenSpan
	usedLogs  []string
	open      []string
	opened    bool // open was written
}

// plan decides what to write, given the agent spans whose runs were made (by trace/span).
func (w *keptWrites) plan(made map[string]bool) {
	w.out, w.used, w.usedLogs = nil, nil, nil
	for _, sp := range w.fresh {
		if w.agents[sp.key()] && made[sp.key()] {
			w.out = append(w.out, idsOf(sp))
		} else if w.agents[sp.key()] {
			w.nodes[sp.key()] = spanNode{parent: w.nodes[sp.key()].parent} // not an agent that made a run
		}
	}
	for _, o := range w.stored {
		if key, a, ok := nearestAgent(w.nodes, o.TraceID, o.SpanID); ok && a.fresh && made[key] && !o.Agent {
			w.used = append(w.used, o)
			if w.logged[o.TraceID+"/"+o.SpanID] {
				w.usedLogs = append(w.usedLogs, o.TraceID+"/"+o.SpanID)
			}
		}
	}
	// In one order, so that two requests keeping ids of one trace lock its rows in the
	// same order (PostgreSQL).
	slices.SortFunc(w.used, func(a, b store.OpenSpan) int {
		return cmp.Or(strings.Compare(a.TraceID, b.TraceID), strings.Compare(a.SpanID, b.SpanID))
	})
	for _, sp := range w.fresh {
		if !w.logged[sp.key()] {
			continue
		}
		if made[sp.key()] {
			w.usedLogs = append(w.usedLogs, sp.key())
		} else if key, a, ok := nearestAgent(w.nodes, sp.trace, sp.id); ok && a.fresh && made[key] {
			w.usedLogs = append(w.usedLogs, sp.key())
		}
	}
	// A trace's spans are kept at least 90% of the window after its last span that was
	// kept: only the traces with a span whose window ends sooner are moved on.
	ifBefore := w.expires().Add(-w.s.opts.TraceWindow / 10)
	w.open = nil
	seen := map[string]bool{}
	for _, o := range w.stored {
		if !seen[o.TraceID] && o.ExpiresAt.Before(ifBefore) {
			seen[o.TraceID] = true
			w.open = append(w.open, o.TraceID)
		}
	}
}

func (w *keptWrites) expires() time.Time { return w.now.Add(w.s.opts.TraceWindow) }

// any reports whether the plan keeps ids or drops bodies.
func (w *keptWrites) any() bool { return len(w.out) > 0 || len(w.used) > 0 || len(w.usedLogs) > 0 }

// write writes the plan in tx; the windows move on when it keeps anything, or when keep
// says the transaction keeps spans of its own.
func (w *keptWrites) write(ctx context.Context, tx *store.Tx, keep bool) error {
	if err := tx.KeepSpanIDs(ctx, w.t.ID, append(append([]store.OpenSpan(nil), w.used...), w.out...), w.expires()); err != nil {
		return err
	}
	if len(w.usedLogs) > 0 {
		if err := tx.DropLogRecords(ctx, w.t.ID, w.usedLogs); err != nil {
			return err
		}
	}
	if (keep || w.any()) && !w.opened && len(w.open) > 0 {
		ifBefore := w.expires().Add(-w.s.opts.TraceWindow / 10)
		if err := tx.KeepOpenTraces(ctx, w.t.ID, w.open, w.expires(), ifBefore); err != nil {
			return err
		}
		w.opened = true
	}
	return nil
}

// keepSpans writes what a request keeps of its tenant's open traces: with kept, what it
// keeps of its agent spans and the spans their runs used (keptWrites; the runs' own
// transaction writes it when the request stored runs), the waiting spans (candidates)
// that fit the tenant's room, and the traces kept open (touch). It returns how many of
// the candidates it kept and those it refused for the room.
func (s *Service) keepSpans(ctx context.Context, t store.Tenant, w *keptWrites, kept bool, candidates []store.OpenSpan,
	touch []store.TraceTouch, now time.Time) (n int, full []store.OpenSpan, err error) {
	expires := now.Add(s.opts.TraceWindow)
	write := func(tx *store.Tx, taken int64) error {
		if kept {
			if err := w.write(ctx, tx, true); err != nil {
				return err
			}
		} else if !w.opened && len(w.open) > 0 {
			// The runs' transaction kept nothing of its own: the windows move on here.
			if err := tx.KeepOpenTraces(ctx, t.ID, w.open, expires, expires.Add(-s.opts.TraceWindow/10)); err != nil {
				return err
			}
		}
		fit, over := fitting(candidates, s.opts.MaxOpenSpanBytes-taken)
		n, full = len(fit), over
		if len(touch) > 0 {
			if err := tx.TouchOpenTraces(ctx, t.ID, touch, now, expires); err != nil {
				return err
			}
		}
		return tx.PutOpenSpans(ctx, t.ID, fit, expires)
	}
	if len(candidates) == 0 {
		// Only ids to store: nothing counts against the cap, and no turn is taken.
		err = s.st.InTx(ctx, func(tx *store.Tx) error { return write(tx, 0) })
	} else {
		// The cap is checked and the spans stored in one turn of the tenant's, so
		// concurrent requests cannot each find the same room and together exceed it.
		err = s.st.WithOpenSpans(ctx, t.ID, now, write)
	}
	if err != nil {
		return 0, nil, err
	}
	return n, full, nil
}

// fitting returns the spans of spans that fit room, in order, and those that did not.
func fitting(spans []store.OpenSpan, room int64) (fit, over []store.OpenSpan) {
	for _, o := range spans {
		if int64(len(o.Span)) > room {
			over = append(over, o)
			continue
		}
		room -= int64(len(o.Span))
		fit = append(fit, o)
	}
	return fit, over
}

// waitingSpans returns the spans that wait for their run as the store would keep them: a
// span the reader reads whole (redacted), another only as a link to its parent. Whether they
// fit the tenant's room is decided where they are stored.
func (s *Service) waitingSpans(t store.Tenant, waiting []*traceSpan) ([]store.OpenSpan, error) {
	if len(waiting) == 0 {
		return nil, nil
	}
	red, err := s.redactor(t)
	if err != nil {
		return nil, err
	}
	out := make([]store.OpenSpan, 0, len(waiting))
	for _, sp := range waiting {
		o, err := keptSpan{sp, !sp.role.Reads(), red}.open()
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

// idsOf is a span as the store keeps it without its body.
func idsOf(sp *traceSpan) store.OpenSpan {
	return store.OpenSpan{TraceID: sp.trace, SpanID: sp.id, ParentSpanID: spanIDString(sp.span.ParentSpanID()),
		Agent: sp.role == ingest.RoleAgent, Span: []byte{}}
}

// keptSpan is a span to keep, whole (redacted with red) or bare.
type keptSpan struct {
	sp   *traceSpan
	bare bool
	red  *redact.Redactor
}

// open is the span as the store keeps it.
func (k keptSpan) open() (store.OpenSpan, error) {
	o := idsOf(k.sp)
	var err error
	o.Span, err = oneSpan(k.sp, k.bare, k.red)
	return o, err
}

// oneSpan encodes sp with its resource and scope as OTLP protobuf, redacted with red (nil:
// nothing to redact; redactSpan). A bare span keeps only what links it into its trace:
// ids, name, times and its GenAI operation.
func oneSpan(sp *traceSpan, bare bool, red *redact.Redactor) ([]byte, error) {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	ss := rs.ScopeSpans().AppendEmpty()
	out := ss.Spans().AppendEmpty()
	if !bare {
		sp.rs.Resource().CopyTo(rs.Resource())
		rs.SetSchemaUrl(sp.rs.SchemaUrl())
		sp.ss.Scope().CopyTo(ss.Scope())
		ss.SetSchemaUrl(sp.ss.SchemaUrl())
		sp.span.CopyTo(out)
	} else {
		out.SetTraceID(sp.span.TraceID())
		out.SetSpanID(sp.span.SpanID())
		out.SetParentSpanID(sp.span.ParentSpanID())
		out.SetName(sp.span.Name())
		out.SetStartTimestamp(sp.span.StartTimestamp())
		out.SetEndTimestamp(sp.span.EndTimestamp())
		if op := ingest.Operation(sp.span); op != "" {
			out.Attributes().PutStr("gen_ai.operation.name", op)
		}
	}
	// Kept until its agent span arrives: nothing redacted reaches the store.
	redactSpan(td, red)
	b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	if err != nil {
		return nil, fmt.Errorf("service: encode span %s: %w", sp.id, err)
	}
	return b, nil
}

func spanIDString(id pcommon.SpanID) string {
	if id.IsEmpty() {
		return ""
	}
	return id.String()
}
