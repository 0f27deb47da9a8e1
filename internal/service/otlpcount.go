package service

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/service/telemetry"
)

// Why spans and log records taken over OTLP made or joined no run: the reasons of the
// ingest view's dropped counters and of the scorekit_otlp_dropped_total metric.
const (
	// DropLate: it arrived after its run was made.
	DropLate = "late"
	// DropOverCap: the tenant's open spans and records were at --otlp-max-open-bytes.
	DropOverCap = "over_cap"
	// DropWindowEnded: it waited for its trace's run until the window ended, and its
	// trace made no run it joined.
	DropWindowEnded = "window_ended"
	// DropNoOutput: its run could not be made: it recorded no output (message content
	// not captured), or its run was rejected.
	DropNoOutput = "no_run"
	// DropNoIDs: a span without a trace or span id.
	DropNoIDs = "no_ids"
)

// Why spans and log records were taken and not kept: counted, not errors.
const (
	// IgnoredNoGenAI: a span of a trace with no GenAI content, or a log record that is
	// not a GenAI event.
	IgnoredNoGenAI = "no_genai"
	// IgnoredNoSpanContext: a log record without a trace or span id.
	IgnoredNoSpanContext = "no_span_context"
)

// IngestView is what a tenant's OTLP exports brought in, as the API and the dashboard
// show it.
type IngestView struct {
	// Spans and LogRecords are how many were received (POST /v1/traces, /v1/logs).
	Spans      int64 `json:"spans"`
	LogRecords int64 `json:"log_records"`
	// Runs is how many runs they made.
	Runs int64 `json:"runs"`
	// WaitingSpans and WaitingLogRecords are kept now, waiting for their run.
	WaitingSpans      int64 `json:"waiting_spans"`
	WaitingLogRecords int64 `json:"waiting_log_records"`
	// Ignored counts what was taken and not kept, by reason (no_genai,
	// no_span_context): not errors.
	Ignored map[string]int64 `json:"ignored"`
	// Dropped counts what made or joined no run, by reason, with the last trace ids.
	Dropped []IngestDrop `json:"dropped"`
}

// IngestDrop is one reason spans or log records were dropped.
type IngestDrop struct {
	Reason string `json:"reason" doc:"late, over_cap, window_ended, no_run, no_ids"`
	// Spans and LogRecords dropped for the reason.
	Spans      int64 `json:"spans"`
	LogRecords int64 `json:"log_records"`
	// TraceIDs are the last traces that had one dropped.
	TraceIDs []string `json:"trace_ids"`
}

// Ingest returns the tenant's ingest view.
func (s *Service) Ingest(ctx context.Context, t store.Tenant) (IngestView, error) {
	v := IngestView{Ignored: map[string]int64{}, Dropped: []IngestDrop{}}
	counts, err := s.st.IngestCounts(ctx, t.ID)
	if err != nil {
		return v, err
	}
	counts = append(counts, s.pendingTally(t.ID)...)
	drops := map[string]*IngestDrop{}
	drop := func(reason string) *IngestDrop {
		d := drops[reason]
		if d == nil {
			d = &IngestDrop{Reason: reason, TraceIDs: []string{}}
			drops[reason] = d
		}
		return d
	}
	for _, c := range counts {
		kind, reason, _ := strings.Cut(c.Name, ":")
		switch kind {
		case "spans":
			v.Spans += c.Count
		case "log_records":
			v.LogRecords += c.Count
		case "runs":
			v.Runs += c.Count
		case "ignored_spans", "ignored_log_records":
			v.Ignored[reason] += c.Count
		case "dropped_spans", "dropped_log_records":
			d := drop(reason)
			if kind == "dropped_spans" {
				d.Spans += c.Count
			} else {
				d.LogRecords += c.Count
			}
			for _, id := range c.Examples {
				if !contains(d.TraceIDs, id) {
					d.TraceIDs = append(d.TraceIDs, id)
				}
			}
		}
	}
	for _, d := range drops {
		v.Dropped = append(v.Dropped, *d)
	}
	sort.Slice(v.Dropped, func(i, j int) bool { return v.Dropped[i].Reason < v.Dropped[j].Reason })
	v.WaitingSpans, v.WaitingLogRecords, err = s.st.Waiting(ctx, t.ID, time.Now())
	return v, err
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// ingestTally gathers one request's or one sweep's counts for a tenant.
type ingestTally struct {
	counts map[string]*store.IngestCount
	order  []string
}

// add counts n under name, with the trace ids given as examples.
func (c *ingestTally) add(name string, n int, traces ...string) {
	if n <= 0 {
		return
	}
	if c.counts == nil {
		c.counts = map[string]*store.IngestCount{}
	}
	e := c.counts[name]
	if e == nil {
		e = &store.IngestCount{Name: name}
		c.counts[name] = e
		c.order = append(c.order, name)
	}
	e.Count += int64(n)
	for _, id := range traces {
		if id != "" && !contains(e.Examples, id) {
			e.Examples = append(e.Examples, id)
		}
	}
}

// drop counts n of signal ("span", "log_record") dropped for reason.
func (c *ingestTally) drop(signal, reason string, n int, traces ...string) {
	c.add("dropped_"+signal+"s:"+reason, n, traces...)
}

// saveTally adds the tally to the drops metric now and to the tenant's counters at the
// next flush (flushTallies): counting writes nothing in the request, so a request that
// is refused takes no writer.
func (s *Service) saveTally(_ context.Context, t store.Tenant, c *ingestTally) error {
	if len(c.order) == 0 {
		return nil
	}
	s.talliesMu.Lock()
	defer s.talliesMu.Unlock()
	if s.tallies == nil {
		s.tallies = map[int64]*ingestTally{}
	}
	p := s.tallies[t.ID]
	if p == nil {
		p = &ingestTally{}
		s.tallies[t.ID] = p
	}
	for _, name := range c.order {
		e := c.counts[name]
		p.add(name, int(e.Count), e.Examples...)
		if ex := p.counts[name].Examples; len(ex) > 2*maxExamples {
			p.counts[name].Examples = ex[len(ex)-maxExamples:]
		}
		if kind, reason, ok := strings.Cut(e.Name, ":"); ok && strings.HasPrefix(kind, "dropped_") {
			signal := strings.TrimSuffix(strings.TrimPrefix(kind, "dropped_"), "s")
			s.opts.Jobs.Telemetry.OTLPDropped(telemetry.Tenant{ID: t.ID, Created: t.CreatedAt, Name: t.Name}, signal, reason, int(e.Count))
		}
	}
	return nil
}

// maxExamples is how many trace ids a counter shows.
const maxExamples = 5

// pendingTally is what this process counted for the tenant since its last flush.
func (s *Service) pendingTally(tenantID int64) []store.IngestCount {
	s.talliesMu.Lock()
	defer s.talliesMu.Unlock()
	p := s.tallies[tenantID]
	if p == nil {
		return nil
	}
	out := make([]store.IngestCount, 0, len(p.order))
	for _, name := range p.order {
		e := *p.counts[name]
		e.Examples = append([]string(nil), e.Examples...)
		out = append(out, e)
	}
	return out
}

// flushTallies adds what this process counted to the tenants' counters in the store.
// Counters add up, so every process flushes its own.
func (s *Service) flushTallies(ctx context.Context) error {
	s.talliesMu.Lock()
	pending := s.tallies
	s.tallies = nil
	s.talliesMu.Unlock()
	var first error
	for id, p := range pending {
		out := make([]store.IngestCount, 0, len(p.order))
		for _, name := range p.order {
			out = append(out, *p.counts[name])
		}
		if err := s.st.AddIngestCounts(ctx, id, out); err != nil && first == nil {
			if _, terr := s.st.TenantByID(ctx, id); terr != nil {
				continue // the tenant was deleted meanwhile
			}
			first = err
		}
	}
	return first
}

// tallyFlushInterval is how often a process adds its OTLP counts to the store.
const tallyFlushInterval = time.Second

// flushTalliesEvery flushes the counts until stop is closed, then once more.
func (s *Service) flushTalliesEvery(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	tick := time.NewTicker(tallyFlushInterval)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			if err := s.flushTallies(context.Background()); err != nil && s.opts.Jobs.Logger != nil {
				s.opts.Jobs.Logger.Warn("service: OTLP counts not stored; they are tried again", "err", err)
			}
		case <-stop:
			_ = s.flushTallies(context.Background())
			return
		}
	}
}
