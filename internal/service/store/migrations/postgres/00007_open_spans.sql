-- +goose Up
-- The spans of open traces that OTLP/HTTP brought in (service/otlp.go): a run is made
-- when its agent span arrives, from the spans of its trace kept here. A span is kept until
-- expires_at, which every new span of its trace moves on. span is a ptrace.Traces that
-- holds the one span with its resource and scope, as OTLP protobuf. The SQLite migration
-- of the same number creates the same table with that backend's types.
CREATE TABLE open_spans (
    tenant_id      BIGINT  NOT NULL REFERENCES tenants (id),
    trace_id       TEXT    NOT NULL,
    span_id        TEXT    NOT NULL,
    parent_span_id TEXT    NOT NULL,
    agent          BOOLEAN NOT NULL,
    span           BYTEA   NOT NULL,
    received_at    BIGINT  NOT NULL,
    expires_at     BIGINT  NOT NULL,
    PRIMARY KEY (tenant_id, trace_id, span_id)
);
CREATE INDEX open_spans_expires ON open_spans (expires_at);

-- +goose Down
DROP TABLE open_spans;
