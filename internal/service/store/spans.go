package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// OpenSpan is a span of an open trace, kept until its trace's agent span arrives (or the
// window ends): the service receives spans as they end, children before their agent.
type OpenSpan struct {
	TraceID      string
	SpanID       string
	ParentSpanID string
	// Agent is true for an agent span, whose run was made when it arrived.
	Agent bool
	// Span is the span with its resource and scope as OTLP protobuf (a ptrace.Traces that
	// holds it alone). OpenSpans leaves it nil unless asked for.
	Span []byte
	// ExpiresAt is when the span's window ends (KeptSpans sets it).
	ExpiresAt time.Time
}

// spanBatch is how many spans one INSERT carries: 8 parameters each.
const spanBatch = 500

// valuesOf returns vals as a table of one column (column1), (VALUES ($from), ...), its
// arguments followed by trailing's, and the placeholder of trailing's i-th (0-based), so
// that a statement that writes the table before the trailing placeholders numbers its
// parameters in order, each once: SQLite then binds them as plain ? (numbered, when its
// connection prepares the statement), where it finds a numbered parameter by a scan of
// those seen before it. Queries join the table
// rather than test trace_id IN (...): where PostgreSQL's plan scans the table, it tests
// such a list against every row, and a join hashes it once.
func valuesOf(vals []string, from int, trailing ...any) (table string, args []any, at func(i int) string) {
	var b strings.Builder
	args = make([]any, 0, len(vals)+len(trailing))
	b.WriteString("(VALUES ")
	for i, v := range vals {
		if i > 0 {
			b.WriteByte(',')
		}
		args = append(args, v)
		fmt.Fprintf(&b, "(CAST($%d AS TEXT))", from+i)
	}
	b.WriteByte(')')
	next := from + len(vals)
	return b.String(), append(args, trailing...), func(i int) string { return fmt.Sprintf("$%d", next+i) }
}

// PutOpenSpans keeps spans of the tenant's open traces until expires; a span the tenant
// has already (same trace and span id) is left as it is, so a batch sent again keeps
// nothing twice.
func (q queries) PutOpenSpans(ctx context.Context, tenantID int64, spans []OpenSpan, expires time.Time) error {
	return q.putOpenSpans(ctx, tenantID, spans, expires, ` ON CONFLICT (tenant_id, trace_id, span_id) DO NOTHING`)
}

// KeepSpanIDs keeps spans of the tenant's open traces as ids only: the agent spans whose
// runs were made, kept until expires, and the kept spans that went into a run, whose
// bodies go (they are in the run, and no longer count against the tenant's room) while
// their rows, and their windows, stay. One upsert does both, each span found by the
// primary key whatever the planner knows of the table: a span the tenant keeps already
// has its body emptied, another is added. spans must not name a span twice.
func (q queries) KeepSpanIDs(ctx context.Context, tenantID int64, spans []OpenSpan, expires time.Time) error {
	ids := make([]OpenSpan, len(spans))
	for i, o := range spans {
		ids[i] = OpenSpan{TraceID: o.TraceID, SpanID: o.SpanID, ParentSpanID: o.ParentSpanID, Agent: o.Agent, Span: []byte{}}
	}
	return q.putOpenSpans(ctx, tenantID, ids, expires, ` ON CONFLICT (tenant_id, trace_id, span_id) DO UPDATE SET span = excluded.span`)
}

// putOpenSpans inserts spans, batched, with onConflict's clause.
func (q queries) putOpenSpans(ctx context.Context, tenantID int64, spans []OpenSpan, expires time.Time, onConflict string) error {
	received := micros(time.Now())
	var b strings.Builder
	for chunk := range slices.Chunk(spans, spanBatch) {
		b.Reset()
		args := make([]any, 0, len(chunk)*8)
		b.WriteString(`INSERT INTO open_spans (tenant_id, trace_id, span_id, parent_span_id, agent, span, received_at, expires_at) VALUES `)
		for i, s := range chunk {
			writeRow(&b, i, len(args)+1, 8)
			args = append(args, tenantID, s.TraceID, s.SpanID, s.ParentSpanID, s.Agent, s.Span, received, micros(expires))
		}
		b.WriteString(onConflict)
		if _, err := q.q.exec(ctx, b.String(), args...); err != nil {
			return fmt.Errorf("store: keep open spans: %w", err)
		}
	}
	return nil
}

// OpenSpans returns the tenant's kept spans of the given traces that have not expired by
// now, with their Span when withSpan is true.
func (q queries) OpenSpans(ctx context.Context, tenantID int64, traceIDs []string, now time.Time, withSpan bool) ([]OpenSpan, error) {
	cols := `trace_id, span_id, parent_span_id, agent`
	if withSpan {
		cols += `, span`
	}
	cols = strings.ReplaceAll(cols, "trace_id", "open_spans.trace_id")
	scan := func(sc scanner) (s OpenSpan, err error) {
		dest := []any{&s.TraceID, &s.SpanID, &s.ParentSpanID, &s.Agent}
		if withSpan {
			dest = append(dest, &s.Span)
		}
		return s, sc.Scan(dest...)
	}
	out, err := keptRows(ctx, q.q, "open_spans", cols, "", tenantID, traceIDs, now, scan)
	if err != nil {
		return nil, fmt.Errorf("store: open spans: %w", err)
	}
	return out, nil
}

// keptRows reads cols of the tenant's rows of table (open_spans or open_logs) of the
// given traces that have not expired by now, with scan, spanBatch traces a statement;
// orderBy (when not empty) orders each statement's rows.
func keptRows[T any](ctx context.Context, q querier, table, cols, orderBy string, tenantID int64, traceIDs []string, now time.Time,
	scan func(scanner) (T, error)) ([]T, error) {
	var (
		out []T
		err error
	)
	for chunk := range slices.Chunk(traceIDs, spanBatch) {
		traces, args, at := valuesOf(chunk, 1, tenantID, micros(now))
		if out, err = appendRows(ctx, out, q, `SELECT `+cols+` FROM `+table+` JOIN `+traces+` AS traces ON `+table+`.trace_id = traces.column1
			WHERE tenant_id = `+at(0)+` AND expires_at > `+at(1)+orderBy, args, scan); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// TraceRead names a trace whose kept spans KeptSpans reads, with their bodies or not.
type TraceRead struct {
	TraceID string
	// Bodies asks for the spans' Span.
	Bodies bool
}

// KeptSpans reads in one statement what the store keeps of the tenant's traces that a
// request brings spans of: their kept spans that have not expired by now (with their
// ExpiresAt, and their Span for the traces read with Bodies; nil for the others), and
// which of the traces had their whole-trace runs made (done, as DoneTraces says). The
// parameters run $1, $2, ... in order, each once, so that SQLite binds them as plain ?
// (numbered).
func (q queries) KeptSpans(ctx context.Context, tenantID int64, traces []TraceRead, now time.Time) ([]OpenSpan, map[string]bool, error) {
	var (
		out  []OpenSpan
		done = map[string]bool{}
		b    strings.Builder
	)
	for chunk := range slices.Chunk(traces, spanBatch) {
		b.Reset()
		args := make([]any, 0, 3+2*len(chunk))
		b.WriteString(`SELECT traces.column1, COALESCE(s.span_id, ''), COALESCE(s.parent_span_id, ''), COALESCE(s.agent, FALSE),
			COALESCE(s.expires_at, 0), CASE WHEN traces.column2 = 1 THEN s.span END, COALESCE(o.done, FALSE) FROM (VALUES `)
		for i, t := range chunk {
			if i > 0 {
				b.WriteByte(',')
			}
			bodies := 0
			if t.Bodies {
				bodies = 1
			}
			args = append(args, t.TraceID, bodies)
			fmt.Fprintf(&b, "(CAST($%d AS TEXT),CAST($%d AS INTEGER))", len(args)-1, len(args))
		}
		n := len(args)
		fmt.Fprintf(&b, `) AS traces
			LEFT JOIN open_traces AS o ON o.tenant_id = $%d AND o.trace_id = traces.column1 AND o.done
			LEFT JOIN open_spans AS s ON s.tenant_id = $%d AND s.trace_id = traces.column1 AND s.expires_at > $%d`, n+1, n+2, n+3)
		args = append(args, tenantID, tenantID, micros(now))
		if err := eachRow(ctx, q.q, b.String(), args, func(sc scanner) error {
			var (
				s       OpenSpan
				expires int64
				isDone  bool
			)
			if err := sc.Scan(&s.TraceID, &s.SpanID, &s.ParentSpanID, &s.Agent, &expires, &s.Span, &isDone); err != nil {
				return err
			}
			if isDone {
				done[s.TraceID] = true
			}
			if s.SpanID != "" { // else a trace with no span kept
				s.ExpiresAt = fromMicros(expires)
				out = append(out, s)
			}
			return nil
		}); err != nil {
			return nil, nil, fmt.Errorf("store: kept spans: %w", err)
		}
	}
	return out, done, nil
}

// KeepOpenTraces moves the end of the tenant's traces' kept spans that end before
// ifBefore on to expires: a trace stays open while its spans keep arriving. (ifBefore a
// little before expires spares rewriting every span of a trace at each of its requests.)
func (q queries) KeepOpenTraces(ctx context.Context, tenantID int64, traceIDs []string, expires, ifBefore time.Time) error {
	for chunk := range slices.Chunk(traceIDs, spanBatch) {
		traces, targs, at := valuesOf(chunk, 2, tenantID, micros(ifBefore))
		args := append([]any{micros(expires)}, targs...)
		if _, err := q.q.exec(ctx, `UPDATE open_spans SET expires_at = $1 FROM `+traces+` AS traces
			WHERE open_spans.tenant_id = `+at(0)+` AND open_spans.expires_at < `+at(1)+` AND open_spans.trace_id = traces.column1`, args...); err != nil {
			return fmt.Errorf("store: keep traces open: %w", err)
		}
	}
	return nil
}

// DropSpanBodies empties the Span of the tenant's kept spans given (by trace and span
// id): spans that went into a run, whose ids are still needed but whose bodies are not.
func (q queries) DropSpanBodies(ctx context.Context, tenantID int64, spans []OpenSpan) error {
	err := emptyBodies(ctx, q.q, "open_spans", "span", tenantID, spans, func(s OpenSpan) (string, string) { return s.TraceID, s.SpanID })
	if err != nil {
		return fmt.Errorf("store: drop span bodies: %w", err)
	}
	return nil
}

// emptyBodies empties column (a body) of the tenant's rows of table (open_spans or
// open_logs) whose trace and span ids key gives of one of items, spanBatch items a
// statement.
func emptyBodies[T any](ctx context.Context, q querier, table, column string, tenantID int64, items []T, key func(T) (trace, span string)) error {
	var b strings.Builder
	for chunk := range slices.Chunk(items, spanBatch) {
		b.Reset()
		args := make([]any, 0, 2+len(chunk)*2)
		args = append(args, []byte{})
		b.WriteString(`UPDATE ` + table + ` SET ` + column + ` = $1 FROM (VALUES `)
		for i, it := range chunk {
			if i > 0 {
				b.WriteByte(',')
			}
			trace, span := key(it)
			n := len(args)
			fmt.Fprintf(&b, "(CAST($%d AS TEXT),CAST($%d AS TEXT))", n+1, n+2)
			args = append(args, trace, span)
		}
		fmt.Fprintf(&b, `) AS used WHERE %[1]s.tenant_id = $%[2]d AND %[1]s.trace_id = used.column1 AND %[1]s.span_id = used.column2`, table, len(args)+1)
		args = append(args, tenantID)
		if _, err := q.exec(ctx, b.String(), args...); err != nil {
			return err
		}
	}
	return nil
}

// OpenSpanBytes is the size of the tenant's kept spans and log records (open_logs) that
// have not expired by now: the tenant's cap counts both.
func (q queries) OpenSpanBytes(ctx context.Context, tenantID int64, now time.Time) (int64, error) {
	var n int64
	// Over the rows that wait (the partial indexes open_spans_waiting, open_logs_waiting):
	// the kept ids count nothing.
	err := queryRow(ctx, q.q, `SELECT (SELECT COALESCE(SUM(LENGTH(span)), 0) FROM open_spans WHERE tenant_id = $1 AND expires_at > $2 AND LENGTH(span) > 0)
		+ (SELECT COALESCE(SUM(LENGTH(record)), 0) FROM open_logs WHERE tenant_id = $3 AND expires_at > $4 AND LENGTH(record) > 0)`,
		[]any{tenantID, micros(now), tenantID, micros(now)}, &n)
	if err != nil {
		return 0, fmt.Errorf("store: open span bytes: %w", err)
	}
	return n, nil
}

// WithOpenSpans runs f in a transaction in the tenant's turn to keep spans, with the
// size of its kept spans that had not expired by now when the turn began: a request that
// checks the tenant's cap (serve --otlp-max-open-bytes) against taken and stores its
// spans in tx cannot be overtaken by another doing the same. On PostgreSQL the turn is a
// lock of the tenant's row, FOR NO KEY UPDATE (which the foreign-key checks of other
// writes do not wait for), taken first in tx so that the spans' own rows are locked after
// it in the same order by every request. On SQLite, which one process opens, it is a lock
// of the process's, held from the count to the commit: the count (tens of milliseconds
// at a full cap) runs beside the writer, not in its transaction.
func (s *Store) WithOpenSpans(ctx context.Context, tenantID int64, now time.Time, f func(tx *Tx, taken int64) error) error {
	return s.d.withOpenSpans(ctx, tenantID, now, f)
}

// DeleteExpiredSpans deletes every tenant's kept spans that expired by now and says how
// many it deleted. Most calls find none: a read (on SQLite, beside the writer, on the
// index of expires_at) says so first, so that they write nothing and do not wait for the
// writer.
func (q queries) DeleteExpiredSpans(ctx context.Context, now time.Time) (int64, error) {
	var expired int
	if err := queryRow(ctx, q.q, `SELECT COUNT(*) FROM (SELECT 1 FROM open_spans WHERE expires_at <= $1 LIMIT 1) AS expired`,
		[]any{micros(now)}, &expired); err != nil {
		return 0, fmt.Errorf("store: find expired spans: %w", err)
	}
	if expired == 0 {
		return 0, nil
	}
	n, err := q.q.exec(ctx, `DELETE FROM open_spans WHERE expires_at <= $1`, micros(now))
	if err != nil {
		return 0, fmt.Errorf("store: delete expired spans: %w", err)
	}
	return n, nil
}
