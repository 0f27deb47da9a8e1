package store

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// otlpFill gives a tenant what a busy OTLP tenant keeps: 40,000 kept ids (agent spans,
// and spans and log records whose runs were made: no body) and 800 spans and records
// still waiting, and 10,000 open traces, beside nine other tenants' alike, with
// statistics.
var otlpFill = map[string][]string{
	SQLite: {
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10)
		 INSERT INTO tenants (id, name, created_at) SELECT i, 't' || i, 0 FROM n`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 400000)
		 INSERT INTO open_spans (tenant_id, trace_id, span_id, parent_span_id, agent, span, received_at, expires_at)
		 SELECT 1 + i % 10, printf('%032x', i / 3), printf('%016x', i), '', 0, CASE WHEN i % 1000 < 10 THEN x'0102' ELSE x'' END, 0, 4000000000000000 FROM n`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 400000)
		 INSERT INTO open_logs (tenant_id, trace_id, span_id, event_name, time_nanos, body_hash, seq, record, received_at, expires_at)
		 SELECT 1 + i % 10, printf('%032x', i / 3), printf('%016x', i), 'gen_ai.choice', i, 'h', 0, CASE WHEN i % 1000 < 10 THEN x'0102' ELSE x'' END, 0, 4000000000000000 FROM n`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000)
		 INSERT INTO open_traces (tenant_id, trace_id, rooted, last_at, done, expires_at)
		 SELECT 1 + i % 10, printf('%032x', i), 1, i, i % 2, 4000000000000000 FROM n`,
		`ANALYZE`,
	},
	Postgres: {
		`INSERT INTO tenants (id, name, created_at) OVERRIDING SYSTEM VALUE SELECT i, 't' || i, 0 FROM generate_series(1, 10) i`,
		`INSERT INTO open_spans (tenant_id, trace_id, span_id, parent_span_id, agent, span, received_at, expires_at)
		 SELECT 1 + i % 10, lpad(to_hex(i / 3), 32, '0'), lpad(to_hex(i), 16, '0'), '', false, CASE WHEN i % 1000 < 10 THEN '\x0102'::bytea ELSE '' END, 0, 4000000000000000
		 FROM generate_series(1, 400000) i`,
		`INSERT INTO open_logs (tenant_id, trace_id, span_id, event_name, time_nanos, body_hash, seq, record, received_at, expires_at)
		 SELECT 1 + i % 10, lpad(to_hex(i / 3), 32, '0'), lpad(to_hex(i), 16, '0'), 'gen_ai.choice', i, 'h', 0, CASE WHEN i % 1000 < 10 THEN '\x0102'::bytea ELSE '' END, 0, 4000000000000000
		 FROM generate_series(1, 400000) i`,
		`INSERT INTO open_traces (tenant_id, trace_id, rooted, last_at, done, expires_at)
		 SELECT 1 + i % 10, lpad(to_hex(i), 32, '0'), true, i, i % 2 = 0, 4000000000000000 FROM generate_series(1, 100000) i`,
		`ANALYZE`,
	},
}

// TestOTLPRequestQueriesUseIndexes: what an OTLP request reads of the store costs what its
// own traces and the tenant's waiting spans cost, not what the tenant keeps in all: the
// room left (OpenSpanBytes, read in every request that keeps spans) is summed over the
// waiting rows by the partial indexes open_spans_waiting and open_logs_waiting (before,
// over every kept id of the window), and the request's traces are read by the primary
// key, on both databases.
func TestOTLPRequestQueriesUseIndexes(t *testing.T) {
	ctx := context.Background()
	for _, database := range []string{SQLite, Postgres} {
		t.Run(database, func(t *testing.T) {
			s := openEmptyStore(t, database)
			for _, q := range otlpFill[database] {
				if _, err := s.q.exec(ctx, q); err != nil {
					t.Fatalf("fill: %v\n%s", err, q)
				}
			}
			var (
				op    string
				plans []statementPlan
			)
			q := queries{q: explainQuerier{s: s, op: &op, plans: &plans}, d: s.d}
			now := time.UnixMicro(1)
			op = "the room left"
			if n, err := q.OpenSpanBytes(ctx, 3, now); err != nil || n != 2*2*400 {
				t.Fatalf("room: %d, %v; want 1,600 bytes", n, err)
			}
			reads := make([]TraceRead, 500)
			for i := range reads {
				reads[i] = TraceRead{TraceID: fmt.Sprintf("%032x", (10*i+2)/3), Bodies: i%2 == 0}
			}
			op = "a request's traces"
			if _, _, err := q.KeptSpans(ctx, 3, reads, now); err != nil {
				t.Fatal(err)
			}
			for _, p := range plans {
				text := strings.Join(p.plan, "\n  ")
				if full := scannedAny(database, p.plan); full != "" {
					t.Errorf("%s reads all of %s:\n  %s", p.op, full, text)
				}
				if p.op == "the room left" && (!strings.Contains(text, "open_spans_waiting") || !strings.Contains(text, "open_logs_waiting")) {
					t.Errorf("%s is not summed over the waiting rows (open_spans_waiting, open_logs_waiting):\n  %s", p.op, text)
				}
				if testing.Verbose() {
					t.Logf("%s:\n  %s", p.op, text)
				}
			}
		})
	}
}

// scannedAny returns a table the plan reads in full, or "".
func scannedAny(database string, plan []string) string {
	for _, step := range plan {
		if strings.Contains(step, "CONSTANT") || strings.Contains(step, "*VALUES*") {
			continue // the request's own traces
		}
		if full := scannedTable(database, strings.TrimSpace(step)); full != "" && full != "traces" {
			return full
		}
	}
	return ""
}
