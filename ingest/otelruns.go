package ingest

import (
	"fmt"
	"runtime"
	"sort"
	"sync"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/scorekit/scorekit/sdk"
)

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
