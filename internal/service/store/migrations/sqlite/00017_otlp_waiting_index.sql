-- +goose Up
-- The spans and log records that still wait for a run (their body kept), by tenant: the
-- bytes a tenant keeps (OpenSpanBytes, read in every request that keeps spans) and what
-- waits (GET /v1/ingest) are summed over these rows alone, not over every kept id of the
-- window (agent spans, and the spans and records already in a run), which outnumber them
-- once runs are made. The queries repeat the predicate, so the planner may use the index.
CREATE INDEX open_spans_waiting ON open_spans (tenant_id, expires_at) WHERE LENGTH(span) > 0;
CREATE INDEX open_logs_waiting ON open_logs (tenant_id, expires_at) WHERE LENGTH(record) > 0;

-- +goose Down
DROP INDEX open_logs_waiting;
DROP INDEX open_spans_waiting;
