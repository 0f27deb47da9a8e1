package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// OpenLog is a GenAI log record of POST /v1/logs kept until its span's run is made (or
// its trace's window ends). Its key is what a resend repeats: trace, span, event name,
// time and a hash of its body and attributes.
type OpenLog struct {
	TraceID   string
	SpanID    string
	EventName string
	TimeNanos int64
	BodyHash  string
	// Seq is the record's place in its request: records of one time keep the order they
	// came in (OpenLogs returns them so).
	Seq int64
	// Record is a plog.Logs holding the record alone with its resource and scope, as OTLP
	// protobuf, redacted; empty once its run was made. OpenLogs leaves it nil unless asked.
	Record []byte
}

// logBatch is how many log records one INSERT carries: 10 parameters each.
const logBatch = 400

// PutOpenLogs keeps log records of the tenant's open traces until expires; a record the
// tenant has already (the same key) is left as it is.
func (q queries) PutOpenLogs(ctx context.Context, tenantID int64, logs []OpenLog, expires time.Time) error {
	received := micros(time.Now())
	var b strings.Builder
	for chunk := range slices.Chunk(logs, logBatch) {
		b.Reset()
		args := make([]any, 0, len(chunk)*10)
		b.WriteString(`INSERT INTO open_logs (tenant_id, trace_id, span_id, event_name, time_nanos, body_hash, seq, record, received_at, expires_at) VALUES `)
		for i, l := range chunk {
			writeRow(&b, i, len(args)+1, 10)
			rec := l.Record
			if rec == nil {
				rec = []byte{}
			}
			args = append(args, tenantID, l.TraceID, l.SpanID, l.EventName, l.TimeNanos, l.BodyHash, l.Seq, rec, received, micros(expires))
		}
		b.WriteString(` ON CONFLICT (tenant_id, trace_id, span_id, event_name, time_nanos, body_hash) DO NOTHING`)
		if _, err := q.q.exec(ctx, b.String(), args...); err != nil {
			return fmt.Errorf("store: keep log records: %w", err)
		}
	}
	return nil
}

// OpenLogs returns the tenant's kept log records of the given traces that have not
// expired by now, with their Record when withRecord is true, in the order they came.
func (q queries) OpenLogs(ctx context.Context, tenantID int64, traceIDs []string, now time.Time, withRecord bool) ([]OpenLog, error) {
	cols := `open_logs.trace_id, span_id, event_name, time_nanos, body_hash, seq`
	if withRecord {
		cols += `, record`
	}
	scan := func(s scanner) (l OpenLog, err error) {
		dest := []any{&l.TraceID, &l.SpanID, &l.EventName, &l.TimeNanos, &l.BodyHash, &l.Seq}
		if withRecord {
			dest = append(dest, &l.Record)
		}
		return l, s.Scan(dest...)
	}
	out, err := keptRows(ctx, q.q, "open_logs", cols, ` ORDER BY received_at, seq`, tenantID, traceIDs, now, scan)
	if err != nil {
		return nil, fmt.Errorf("store: open log records: %w", err)
	}
	return out, nil
}

// DropLogRecords empties the Record of the tenant's kept log records of the given
// traces and spans (trace/span keys): records that went into a run, whose keys are still
// needed but whose bodies are not.
func (q queries) DropLogRecords(ctx context.Context, tenantID int64, spans []string) error {
	err := emptyBodies(ctx, q.q, "open_logs", "record", tenantID, spans, func(k string) (string, string) {
		trace, span, _ := strings.Cut(k, "/")
		return trace, span
	})
	if err != nil {
		return fmt.Errorf("store: drop log records: %w", err)
	}
	return nil
}

// OpenLogBytes is the size of the tenant's kept log records that have not expired by now.
func (q queries) OpenLogBytes(ctx context.Context, tenantID int64, now time.Time) (int64, error) {
	var n int64
	err := queryRow(ctx, q.q, `SELECT COALESCE(SUM(LENGTH(record)), 0) FROM open_logs WHERE tenant_id = $1 AND expires_at > $2 AND LENGTH(record) > 0`,
		[]any{tenantID, micros(now)}, &n)
	if err != nil {
		return 0, fmt.Errorf("store: open log bytes: %w", err)
	}
	return n, nil
}

// TraceTouch is a trace that a request brought spans or records of.
type TraceTouch struct {
	TraceID string
	// Rooted is true when the request held the trace's root span (one without a parent).
	Rooted bool
}

// TouchOpenTraces records that the tenant's traces had spans or records arrive at now:
// each is open until expires, rooted once a root span came.
func (q queries) TouchOpenTraces(ctx context.Context, tenantID int64, traces []TraceTouch, now, expires time.Time) error {
	var b strings.Builder
	for chunk := range slices.Chunk(traces, spanBatch) {
		b.Reset()
		args := []any{tenantID, micros(now), micros(expires), false}
		b.WriteString(`INSERT INTO open_traces (tenant_id, trace_id, rooted, last_at, done, expires_at) VALUES `)
		for i, t := range chunk {
			if i > 0 {
				b.WriteByte(',')
			}
			n := len(args)
			fmt.Fprintf(&b, "($1,$%d,$%d,$2,$4,$3)", n+1, n+2)
			args = append(args, t.TraceID, t.Rooted)
		}
		// A trace's root stays known; its last arrival and window move on.
		b.WriteString(` ON CONFLICT (tenant_id, trace_id) DO UPDATE SET
			rooted = CASE WHEN excluded.rooted THEN excluded.rooted ELSE open_traces.rooted END,
			last_at = excluded.last_at, expires_at = excluded.expires_at`)
		if _, err := q.q.exec(ctx, b.String(), args...); err != nil {
			return fmt.Errorf("store: keep traces open: %w", err)
		}
	}
	return nil
}

// DoneTraces returns which of the tenant's traces had their whole-trace runs made.
func (q queries) DoneTraces(ctx context.Context, tenantID int64, traceIDs []string) (map[string]bool, error) {
	out := map[string]bool{}
	for chunk := range slices.Chunk(traceIDs, spanBatch) {
		traces, args, at := valuesOf(chunk, 1, tenantID)
		if err := addKeys(ctx, out, q.q, `SELECT open_traces.trace_id FROM open_traces JOIN `+traces+` AS traces ON open_traces.trace_id = traces.column1
			WHERE tenant_id = `+at(0)+` AND done`, args, scanValue[string]); err != nil {
			return nil, fmt.Errorf("store: done traces: %w", err)
		}
	}
	return out, nil
}

// DueTrace is an open trace whose whole-trace runs are due.
type DueTrace struct {
	TenantID int64
	TraceID  string
	// Ended is true when its window ended (or is about to) rather than it being quiet.
	Ended bool
}

// DueTraces returns up to limit traces whose whole-trace runs are not made and are due:
// a root span came and nothing came after quietBefore (open_traces), or spans of it wait
// (kept with their body) and its window ends before endBefore (open_spans, by the index
// of expires_at; open_logs likewise).
func (q queries) DueTraces(ctx context.Context, quietBefore, endBefore time.Time, limit int) ([]DueTrace, error) {
	var out []DueTrace
	seen := map[DueTrace]bool{}
	add := func(query string, ended bool, args ...any) error {
		err := eachRow(ctx, q.q, query, args, func(s scanner) error {
			var d DueTrace
			if len(out) == limit {
				return nil // full: the query's LIMIT bounds what is left to read
			}
			if err := s.Scan(&d.TenantID, &d.TraceID); err != nil {
				return err
			}
			if !seen[d] {
				seen[d] = true
				d.Ended = ended
				out = append(out, d)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("store: due traces: %w", err)
		}
		return nil
	}
	ending := func(table, body string) string {
		return `SELECT DISTINCT w.tenant_id, w.trace_id FROM ` + table + ` AS w
			WHERE w.expires_at < $1 AND LENGTH(w.` + body + `) > 0 AND NOT EXISTS (SELECT 1 FROM open_traces
				WHERE open_traces.tenant_id = w.tenant_id AND open_traces.trace_id = w.trace_id AND open_traces.done)
			LIMIT $2`
	}
	if err := add(ending("open_spans", "span"), true, micros(endBefore), limit); err != nil {
		return nil, err
	}
	if err := add(ending("open_logs", "record"), true, micros(endBefore), limit); err != nil {
		return nil, err
	}
	if err := add(`SELECT tenant_id, trace_id FROM open_traces WHERE NOT done AND rooted AND last_at <= $1 ORDER BY last_at LIMIT $2`,
		false, micros(quietBefore), limit); err != nil {
		return nil, err
	}
	return out, nil
}

// ClaimTrace marks the tenant's trace done if it was not, and reports whether this call
// did: of servers that find the same trace due, one makes its runs. A trace not yet in
// open_traces (its root never came) is added done, open until expires.
func (q queries) ClaimTrace(ctx context.Context, tenantID int64, traceID string, now, expires time.Time) (bool, error) {
	n, err := q.q.exec(ctx, `INSERT INTO open_traces (tenant_id, trace_id, rooted, last_at, done, expires_at) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (tenant_id, trace_id) DO UPDATE SET done = excluded.done WHERE NOT open_traces.done`,
		tenantID, traceID, false, micros(now), true, micros(expires))
	if err != nil {
		return false, fmt.Errorf("store: claim trace: %w", err)
	}
	return n == 1, nil
}

// ReleaseTrace undoes ClaimTrace, for a trace whose runs could not be made.
func (q queries) ReleaseTrace(ctx context.Context, tenantID int64, traceID string) error {
	if _, err := q.q.exec(ctx, `UPDATE open_traces SET done = $3 WHERE tenant_id = $1 AND trace_id = $2`, tenantID, traceID, false); err != nil {
		return fmt.Errorf("store: release trace: %w", err)
	}
	return nil
}

// ExpiredWaiting counts, per tenant and trace, the kept spans with a body and the kept
// log records with a record whose window ended by now: what waited for a run until then.
func (q queries) ExpiredWaiting(ctx context.Context, now time.Time) ([]ExpiredCount, error) {
	out, err := collect(ctx, q.q, `SELECT tenant_id, trace_id, 'span', COUNT(*) FROM open_spans WHERE expires_at <= $1 AND LENGTH(span) > 0
			GROUP BY tenant_id, trace_id
		UNION ALL SELECT tenant_id, trace_id, 'log_record', COUNT(*) FROM open_logs WHERE expires_at <= $1 AND LENGTH(record) > 0
			GROUP BY tenant_id, trace_id`, []any{micros(now)}, func(s scanner) (e ExpiredCount, err error) {
		err = s.Scan(&e.TenantID, &e.TraceID, &e.Signal, &e.N)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: expired spans: %w", err)
	}
	return out, nil
}

// ExpiredCount is what one trace of a tenant had waiting when its window ended.
type ExpiredCount struct {
	TenantID int64
	TraceID  string
	// Signal is "span" or "log_record".
	Signal string
	N      int64
}

// DeleteExpiredOTLP deletes every tenant's kept log records and open traces whose window
// ended by now (DeleteExpiredSpans deletes the spans).
func (q queries) DeleteExpiredOTLP(ctx context.Context, now time.Time) error {
	for _, table := range []string{"open_logs", "open_traces"} {
		var expired int
		if err := queryRow(ctx, q.q, `SELECT COUNT(*) FROM (SELECT 1 FROM `+table+` WHERE expires_at <= $1 LIMIT 1) AS expired`,
			[]any{micros(now)}, &expired); err != nil {
			return fmt.Errorf("store: find expired %s: %w", table, err)
		}
		if expired == 0 {
			continue
		}
		if _, err := q.q.exec(ctx, `DELETE FROM `+table+` WHERE expires_at <= $1`, micros(now)); err != nil {
			return fmt.Errorf("store: delete expired %s: %w", table, err)
		}
	}
	return nil
}

// IngestCount is one of a tenant's OTLP counters: spans, log_records, runs, ignored,
// waiting (read, not stored), or dropped:REASON with the last trace ids dropped.
type IngestCount struct {
	Name     string
	Count    int64
	Examples []string
}

// maxExamples bounds the trace ids a counter keeps.
const maxExamples = 5

// AddIngestCounts adds to the tenant's counters; a counter given examples keeps the last
// of them.
func (q queries) AddIngestCounts(ctx context.Context, tenantID int64, counts []IngestCount) error {
	if len(counts) == 0 {
		return nil
	}
	var b strings.Builder
	args := []any{tenantID}
	b.WriteString(`INSERT INTO ingest_counts (tenant_id, name, count, examples) VALUES `)
	for i, c := range counts {
		if i > 0 {
			b.WriteByte(',')
		}
		ex := c.Examples
		if len(ex) > maxExamples {
			ex = ex[len(ex)-maxExamples:]
		}
		n := len(args)
		fmt.Fprintf(&b, "($1,$%d,$%d,$%d)", n+1, n+2, n+3)
		args = append(args, c.Name, c.Count, strings.Join(ex, " "))
	}
	b.WriteString(` ON CONFLICT (tenant_id, name) DO UPDATE SET count = ingest_counts.count + excluded.count,
		examples = CASE WHEN excluded.examples = '' THEN ingest_counts.examples ELSE excluded.examples END`)
	if _, err := q.q.exec(ctx, b.String(), args...); err != nil {
		return fmt.Errorf("store: count OTLP: %w", err)
	}
	return nil
}

// IngestCounts returns the tenant's counters, by name.
func (q queries) IngestCounts(ctx context.Context, tenantID int64) ([]IngestCount, error) {
	out, err := collect(ctx, q.q, `SELECT name, count, examples FROM ingest_counts WHERE tenant_id = $1 ORDER BY name`, []any{tenantID},
		func(s scanner) (IngestCount, error) {
			var (
				c  IngestCount
				ex string
			)
			err := s.Scan(&c.Name, &c.Count, &ex)
			if ex != "" {
				c.Examples = strings.Fields(ex)
			}
			return c, err
		})
	if err != nil {
		return nil, fmt.Errorf("store: OTLP counts: %w", err)
	}
	return out, nil
}

// Waiting counts the tenant's kept spans and log records that wait for a run (their body
// is kept) and have not expired by now.
func (q queries) Waiting(ctx context.Context, tenantID int64, now time.Time) (spans, logs int64, err error) {
	if err = queryRow(ctx, q.q, `SELECT COUNT(*) FROM open_spans WHERE tenant_id = $1 AND expires_at > $2 AND LENGTH(span) > 0`,
		[]any{tenantID, micros(now)}, &spans); err != nil {
		return 0, 0, fmt.Errorf("store: waiting spans: %w", err)
	}
	if err = queryRow(ctx, q.q, `SELECT COUNT(*) FROM open_logs WHERE tenant_id = $1 AND expires_at > $2 AND LENGTH(record) > 0`,
		[]any{tenantID, micros(now)}, &logs); err != nil {
		return 0, 0, fmt.Errorf("store: waiting log records: %w", err)
	}
	return spans, logs, nil
}

// UsedSpans returns the tenant's kept spans of the given traces that are in a run
// already (kept without their body: agent spans, and the spans their runs used), as
// trace/span keys.
func (q queries) UsedSpans(ctx context.Context, tenantID int64, traceIDs []string, now time.Time) (map[string]bool, error) {
	out := map[string]bool{}
	for chunk := range slices.Chunk(traceIDs, spanBatch) {
		traces, args, at := valuesOf(chunk, 1, tenantID, micros(now))
		if err := addKeys(ctx, out, q.q, `SELECT open_spans.trace_id, span_id FROM open_spans JOIN `+traces+` AS traces ON open_spans.trace_id = traces.column1
			WHERE tenant_id = `+at(0)+` AND expires_at > `+at(1)+` AND LENGTH(span) = 0`, args, func(s scanner) (string, error) {
			var trace, span string
			err := s.Scan(&trace, &span)
			return trace + "/" + span, err
		}); err != nil {
			return nil, fmt.Errorf("store: used spans: %w", err)
		}
	}
	return out, nil
}

// DeletedRuns returns which of the run ids given the tenant deleted (within
// TombstoneTTL): a run that is not stored again.
func (q queries) DeletedRuns(ctx context.Context, tenantID int64, ids []string) (map[string]bool, error) {
	out := map[string]bool{}
	for chunk := range slices.Chunk(ids, spanBatch) {
		if err := q.tombstoned(ctx, tenantID, chunk, out); err != nil {
			return nil, fmt.Errorf("store: deleted runs: %w", err)
		}
	}
	return out, nil
}

// HasOpenLogs reports whether the tenant keeps any log record (one probe of the primary
// key): a tenant whose exporters send no log records pays nothing more for them.
func (q queries) HasOpenLogs(ctx context.Context, tenantID int64) (bool, error) {
	var n int
	if err := queryRow(ctx, q.q, `SELECT COUNT(*) FROM (SELECT 1 FROM open_logs WHERE tenant_id = $1 LIMIT 1) AS kept`,
		[]any{tenantID}, &n); err != nil {
		return false, fmt.Errorf("store: open log records: %w", err)
	}
	return n > 0, nil
}
