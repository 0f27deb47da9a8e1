package service

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/scorekit/scorekit/ingest"
	"github.com/scorekit/scorekit/internal/service/store"
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
