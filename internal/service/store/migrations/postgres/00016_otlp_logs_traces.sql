-- +goose Up
-- What OTLP/HTTP brings in beside the open spans (00007). open_logs: the GenAI log records
-- of POST /v1/logs waiting for their span's run, each a plog.Logs holding the one record
-- with its resource and scope as OTLP protobuf, redacted; emptied once its run is made
-- (its key still knows it if it is sent again); seq is its place in its request, which
-- with received_at keeps the records of a span in the order they came. The key is what
-- a resend repeats: trace, span, event name, time and a hash of the body and attributes. open_traces: the traces
-- with kept spans or records: whether a root span came, when the last span or record
-- came (micros), whether the runs that need the whole trace were made (done), and when
-- the trace's window ends. ingest_counts: per tenant, what OTLP took and dropped (spans,
-- log_records, runs, ignored, dropped:REASON), with the last trace ids dropped.
-- The SQLite migration of the same number creates the same tables with that backend's types.
CREATE TABLE open_logs (
    tenant_id   BIGINT  NOT NULL REFERENCES tenants (id),
    trace_id    TEXT    NOT NULL,
    span_id     TEXT    NOT NULL,
    event_name  TEXT    NOT NULL,
    time_nanos  BIGINT  NOT NULL,
    body_hash   TEXT    NOT NULL,
    seq         BIGINT  NOT NULL,
    record      BYTEA   NOT NULL,
    received_at BIGINT  NOT NULL,
    expires_at  BIGINT  NOT NULL,
    PRIMARY KEY (tenant_id, trace_id, span_id, event_name, time_nanos, body_hash)
);
CREATE INDEX open_logs_expires ON open_logs (expires_at);

CREATE TABLE open_traces (
    tenant_id  BIGINT  NOT NULL REFERENCES tenants (id),
    trace_id   TEXT    NOT NULL,
    rooted     BOOLEAN NOT NULL,
    last_at    BIGINT  NOT NULL,
    done       BOOLEAN NOT NULL,
    expires_at BIGINT  NOT NULL,
    PRIMARY KEY (tenant_id, trace_id)
);
CREATE INDEX open_traces_due ON open_traces (done, last_at);
CREATE INDEX open_traces_expires ON open_traces (expires_at);

CREATE TABLE ingest_counts (
    tenant_id BIGINT  NOT NULL REFERENCES tenants (id),
    name      TEXT    NOT NULL,
    count     BIGINT  NOT NULL,
    examples  TEXT    NOT NULL,
    PRIMARY KEY (tenant_id, name)
);

-- +goose Down
DROP TABLE ingest_counts;
DROP TABLE open_traces;
DROP TABLE open_logs;
