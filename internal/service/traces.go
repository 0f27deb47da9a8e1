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
	"github.com/scorekit/scorekit/sdk"
)

// TracesResult says what IngestTraces did with the spans of one request.
type TracesResult struct {
	// Spans is how many spans the request held.
	Spans int `json:"spans"`
	// Runs says what happened to the runs the request's agent spans made: stored, or
	// duplicates of runs the tenant had (a batch sent again).
	Runs ImportResult `json:"runs"`
	// Kept is how many spans were kept for their trace's agent span, which has not arrived.
	Kept int `json:"kept"`
	// Ignored is how many spans were taken and not kept: spans of traces with no GenAI
	// content. They are not errors.
	Ignored int `json:"ignored"`
	// Rejected is how many spans were not taken; Errors say why.
	Rejected int `json:"rejected"`
	// Errors say why spans were rejected: the first few reasons, each once.
	Errors []string `json:"errors,omitempty"`
}

// Message is the result's errors and warnings in one line, for OTLP's partial success
// answer; "" when every span was taken and there is nothing to say.
func (r TracesResult) Message() string {
	var parts []string
	if r.Rejected > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d spans rejected: %s", r.Rejected, r.Spans, strings.Join(r.Errors, "; ")))
	}
	if r.Ignored > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d spans ignored: their traces have no GenAI content (no agent, model call or "+
			"GenAI framework span)", r.Ignored, r.Spans))
	}
	return strings.Join(append(parts, r.Runs.Warnings...), "; ")
}

// maxReasons caps the reasons a result gives (addReason): a batch of a thousand bad spans says the same
// thing a thousand times.
const maxReasons = 5

func (r *TracesResult) reject(n int, reason string) {
	r.Rejected += n
	r.Errors = addReason(r.Errors, reason)
}

// addReason is reasons with reason at the end, unless it is there already or there are
// maxReasons.
func addReason(reasons []string, reason string) []string {
	if len(reasons) >= maxReasons || slices.Contains(reasons, reason) {
		return reasons
	}
	return append(reasons, reason)
}

// traceSpan is one span of a request, with the resource and scope it came under.
type traceSpan struct {
	rs    ptrace.ResourceSpans
	ss    ptrace.ScopeSpans
	span  ptrace.Span
	trace string
	id    string
	role  ingest.Role
}

func (ts *traceSpan) key() string { return ts.trace + "/" + ts.id }

// spanNode is what the ancestry walk needs of a span: its parent, and whether it is an
// agent span and arrived in this request.
type spanNode struct {
	parent string
	agent  bool
	fresh  bool
}

// IngestTraces takes the spans of one OTLP export request (td) for tenant t and stores
// the runs they make, as POST /v1/runs stores runs, evaluated on arrival by the agents'
// policies. The reader is ingest's, the code `scorekit convert` uses (ingest.Spans).
//
// An agent span of any convention (ingest.RoleAgent: invoke_agent, an OpenInference
// AGENT, a traceloop agent) makes its run when it arrives, from the spans below it (and
// the log records joined to them, IngestLogs). Children end before their agent and an
// exporter sends spans as they end, so the spans below an agent come before it or with
// it, in other requests, possibly to another server on the same database: the spans of a
// GenAI trace whose run is not made are kept in the store (open_spans) until
// Config.TraceWindow after the trace's last span arrived, up to Config.MaxOpenSpanBytes
// per tenant (spans and log records together). The runs that need the whole trace (a
// call span such as the AI SDK's ai.generateText, a root CHAIN, a traceloop workflow,
// model calls joined into turns) are made by CompleteTraces once the trace is complete,
// not by a request. A run is made once: a span that arrives after the run it would join
// was made is rejected (counted, with the reason), never attached later, so a stored run
// never changes under its evaluations. Spans of traces without any GenAI span are taken,
// counted as ignored and not kept. A span the tenant sent already (the same trace and
// span id, within the window) is taken again without effect, so a batch sent again
// stores nothing twice; the runs are stored once per id ([ingest.RunID]) in any case. An
// agent span whose run could not be made is not kept: sent again, it is read again.
func (s *Service) IngestTraces(ctx context.Context, t store.Tenant, td ptrace.Traces) (TracesResult, error) {
	now := time.Now()
	res := TracesResult{Spans: td.SpanCount(), Runs: ImportResult{Runs: []ImportedRun{}}}
	var tally ingestTally
	tally.add("spans", res.Spans)
	spans, traces := s.requestSpans(td, &res, &tally)
	if len(spans) == 0 {
		return res, s.saveTally(ctx, t, &tally)
	}
	// One read of what the store keeps of the request's traces: their kept spans, with
	// their bodies where the request brings an agent span (its run is made of them), and
	// which traces had their whole-trace runs made.
	hasAgent := map[string]bool{}
	for _, sp := range spans {
		if sp.role == ingest.RoleAgent {
			hasAgent[sp.trace] = true
		}
	}
	reads := make([]store.TraceRead, len(traces))
	for i, id := range traces {
		reads[i] = store.TraceRead{TraceID: id, Bodies: hasAgent[id]}
	}
	stored, done, err := s.st.KeptSpans(ctx, t.ID, reads, now)
	if err != nil {
		return res, err
	}
	nodes := map[string]spanNode{}
	genAI := map[string]bool{}  // traces with a GenAI span, stored or in the request
	rooted := map[string]bool{} // traces whose root span is kept
	for _, o := range stored {
		nodes[o.TraceID+"/"+o.SpanID] = spanNode{parent: o.ParentSpanID, agent: o.Agent}
		genAI[o.TraceID] = true // only GenAI traces' spans are kept
		if o.ParentSpanID == "" {
			rooted[o.TraceID] = true
		}
	}
	var (
		fresh     []*traceSpan
		requested = map[string]bool{} // every span of the request, sent before or not
	)
	for _, sp := range spans {
		requested[sp.key()] = true
		if _, ok := nodes[sp.key()]; ok {
			continue // sent before: taken again without effect
		}
		fresh = append(fresh, sp)
		nodes[sp.key()] = spanNode{parent: spanIDString(sp.span.ParentSpanID()), agent: sp.role == ingest.RoleAgent, fresh: true}
		if sp.role.Reads() {
			genAI[sp.trace] = true
		}
	}

	// Each fresh span: in a trace whose runs were made, late (an agent span makes its run
	// in any case); an agent span makes a run now; a span below a fresh agent span goes
	// into its run; a span below an agent span that came earlier is late, unless that
	// agent span is sent again with it (a batch sent again); any other span of a GenAI
	// trace waits for its run.
	var (
		agentTraces []string
		agents      = map[string]bool{} // fresh agent spans, by trace/span
		withAgent   = map[string]bool{} // traces with a fresh agent span
		waiting     []*traceSpan
		late        []string
		ignored     int
	)
	for _, sp := range fresh {
		if done[sp.trace] && sp.role != ingest.RoleAgent {
			late = append(late, sp.trace)
			res.reject(1, fmt.Sprintf("span %s of trace %s arrived after its trace was complete and its runs were made; "+
				"a run is made once: export a span when it ends (a batch span processor does)", sp.id, sp.trace))
			continue
		}
		if sp.role == ingest.RoleAgent {
			if !withAgent[sp.trace] {
				agentTraces = append(agentTraces, sp.trace)
			}
			withAgent[sp.trace], agents[sp.key()] = true, true
			continue
		}
		switch key, a, ok := nearestAgent(nodes, sp.trace, sp.id); {
		case ok && a.fresh, ok && requested[key]:
		case ok:
			late = append(late, sp.trace)
			res.reject(1, fmt.Sprintf("span %s of trace %s arrived after its agent span's run was made; "+
				"a run is made once, when its agent span arrives: export a span when it ends (a batch span processor does)", sp.id, sp.trace))
		case genAI[sp.trace]:
			waiting = append(waiting, sp)
		default:
			ignored++
		}
	}
	tally.drop("span", DropLate, len(late), late...)
	if err := s.deletedRunSpans(ctx, t, spans, requested, fresh, nodes, &res); err != nil {
		return res, err
	}
	if ignored > 0 {
		res.Ignored += ignored
		tally.add("ignored_spans:"+IgnoredNoGenAI, ignored)
	}

	// Spans that cannot fit the tenant's room are refused before anything is written: a
	// tenant over its cap spends its own request's time, not the store's writer (one
	// connection on SQLite, which every tenant's writes wait for) nor its turn to keep
	// spans. The room is read beside the writer, and checked again in the turn; room
	// freed in between is not seen, as if the spans had come a moment earlier.
	var full []*traceSpan
	var taken int64
	if len(waiting) > 0 {
		if taken, err = s.st.OpenSpanBytes(ctx, t.ID, now); err != nil {
			return res, err
		}
		if taken >= s.opts.MaxOpenSpanBytes {
			full, waiting = waiting, nil // not even encoded
		}
	}
	candidates, err := s.waitingSpans(t, waiting)
	if err != nil {
		return res, err
	}
	candidates, refused := fitting(candidates, s.opts.MaxOpenSpanBytes-taken)
	// The traces whose runs CompleteTraces makes once they are quiet: those whose root span
	// is kept, now or before, and that get spans. A trace whose root is an agent span that
	// made its run is complete already; one whose root has not come waits for its window's
	// end (store.DueTraces finds it by its spans).
	roots := map[string]bool{}
	for _, o := range candidates {
		if o.ParentSpanID == "" {
			roots[o.TraceID] = true
		}
	}
	var touch []store.TraceTouch
	for _, id := range traces {
		if (roots[id] || rooted[id]) && !done[id] {
			touch = append(touch, store.TraceTouch{TraceID: id, Rooted: true})
		}
	}

	// The agents' runs, stored with what the request keeps of their spans, in one
	// transaction: the spans that went into a run keep only their ids, so that a run is
	// made of them once.
	w := keptWrites{s: s, t: t, stored: stored, fresh: fresh, agents: agents, nodes: nodes, now: now, logged: map[string]bool{}}
	items, spanIDs, err := s.agentRunItems(ctx, t, td, stored, requested, agentTraces, agents, nodes, now, &res, &tally, w.logged)
	if err != nil {
		return res, err
	}
	wrote := false // w was written with the runs
	if len(items) > 0 {
		imp, err := s.storeRuns(ctx, t, items, storeOptions{inTx: func(ctx context.Context, tx *store.Tx, imp *ImportResult) error {
			w.plan(madeOf(imp))
			if err := w.write(ctx, tx, false); err != nil {
				return err
			}
			wrote = true
			return nil
		}})
		if err != nil {
			return res, err
		}
		for _, ir := range imp.Runs {
			trace, _, _ := strings.Cut(ir.ID, "-")
			switch ir.Status {
			case RunRejected:
				res.reject(1, fmt.Sprintf("agent span %s: its run was rejected: %s", spanIDs[ir.Line-1], ir.Error))
				tally.drop("span", DropNoOutput, 1, trace)
			case RunDeleted:
				// As POST /v1/runs answers it: the run is not stored again.
				res.reject(1, fmt.Sprintf("agent span %s: run %s: %s", spanIDs[ir.Line-1], ir.ID, ir.Error))
			}
		}
		tally.add("runs", imp.Stored)
		res.Runs = imp
	}
	if !wrote {
		w.plan(nil)
	}
	var kept int
	var over []store.OpenSpan
	if (!wrote && w.any()) || len(candidates) > 0 || len(touch) > 0 {
		if kept, over, err = s.keepSpans(ctx, t, &w, !wrote, candidates, touch, now); err != nil {
			return res, err
		}
	}
	res.Kept += kept
	if n := len(full) + len(refused) + len(over); n > 0 {
		var ids []string
		for _, sp := range full {
			ids = append(ids, sp.trace)
		}
		for _, o := range append(refused, over...) {
			ids = append(ids, o.TraceID)
		}
		tally.drop("span", DropOverCap, n, ids...)
		res.reject(n, fmt.Sprintf("tenant %q keeps at most %d bytes of spans and log records of open traces (serve --otlp-max-open-bytes), "+
			"and they are full: spans wait for their trace's run for %s after the trace's last span arrived", t.Name, s.opts.MaxOpenSpanBytes, s.opts.TraceWindow))
	}
	return res, s.saveTally(ctx, t, &tally)
}

// madeOf returns the agent spans (trace/span) whose runs an import made: stored, the
// tenant's already, or deleted by it (not stored again, and not to be made again). A
// rejected run was not made: its agent span is read again when it is sent again.
func madeOf(imp *ImportResult) map[string]bool {
	made := map[string]bool{}
	for _, ir := range imp.Runs {
		if ir.Status != RunRejected {
			trace, span, _ := strings.Cut(ir.ID, "-")
			made[trace+"/"+span] = true
		}
	}
	return made
}

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

// deletedRunSpans answers the spans sent again whose run the tenant deleted as POST
// /v1/runs answers a deleted run: it is not stored again. A span's run is the one its
// own id names (an agent or call span, a joined turn's first model call) or its agent
// span's.
func (s *Service) deletedRunSpans(ctx context.Context, t store.Tenant, spans []*traceSpan, requested map[string]bool, fresh []*traceSpan,
	nodes map[string]spanNode, res *TracesResult) error {
	if len(fresh) == len(spans) {
		return nil // nothing sent again
	}
	isFresh := make(map[string]bool, len(fresh))
	for _, sp := range fresh {
		isFresh[sp.key()] = true
	}
	runOf := map[string][]string{} // run id -> the spans sent again that it holds
	var ids []string
	for _, sp := range spans {
		if isFresh[sp.key()] || !requested[sp.key()] {
			continue
		}
		cands := []string{sp.trace + "-" + sp.id}
		if key, _, ok := nearestAgent(nodes, sp.trace, sp.id); ok {
			cands = append(cands, strings.Replace(key, "/", "-", 1))
		}
		for _, id := range cands {
			if runOf[id] == nil {
				ids = append(ids, id)
			}
			runOf[id] = append(runOf[id], sp.id)
		}
	}
	deleted, err := s.st.DeletedRuns(ctx, t.ID, ids)
	if err != nil || len(deleted) == 0 {
		return err
	}
	counted := map[string]bool{}
	for _, id := range ids {
		if !deleted[id] {
			continue
		}
		for _, span := range runOf[id] {
			if !counted[span] {
				counted[span] = true
				res.reject(1, fmt.Sprintf("run %s: a run with this id was deleted; it is not stored again (send it under a new id to store it)", id))
			}
		}
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

// requestSpans lists the request's spans, each once, and the traces they belong to; a
// span without a trace or span id is rejected.
func (s *Service) requestSpans(td ptrace.Traces, res *TracesResult, tally *ingestTally) ([]*traceSpan, []string) {
	var (
		out    []*traceSpan
		traces []string
		seen   = map[string]bool{}
		tseen  = map[string]bool{}
	)
	rss := td.ResourceSpans()
	for i := range rss.Len() {
		rs := rss.At(i)
		sss := rs.ScopeSpans()
		for j := range sss.Len() {
			ss := sss.At(j)
			for k := range ss.Spans().Len() {
				span := ss.Spans().At(k)
				if span.TraceID().IsEmpty() || span.SpanID().IsEmpty() {
					res.reject(1, fmt.Sprintf("span %q has no trace id or span id; OTLP requires both", span.Name()))
					tally.drop("span", DropNoIDs, 1)
					continue
				}
				sp := &traceSpan{rs: rs, ss: ss, span: span, trace: span.TraceID().String(), id: span.SpanID().String(), role: ingest.SpanRole(span)}
				if seen[sp.key()] {
					continue
				}
				seen[sp.key()] = true
				out = append(out, sp)
				if !tseen[sp.trace] {
					tseen[sp.trace] = true
					traces = append(traces, sp.trace)
				}
			}
		}
	}
	return out, traces
}

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
