-- +goose Up
-- Retention and deletion (store/deletion.go). The SQLite migration of the same number
-- creates the same tables with that backend's types.

-- A deleted run stays deleted: a retried import carrying its id is not stored again while
-- its tombstone lasts (TombstoneTTL). The run id is kept as its SHA-256 only.
CREATE TABLE run_tombstones (
    tenant_id  BIGINT  NOT NULL REFERENCES tenants (id),
    run_hash   BYTEA   NOT NULL,
    deleted_at BIGINT  NOT NULL,
    PRIMARY KEY (tenant_id, run_hash)
);
CREATE INDEX run_tombstones_deleted ON run_tombstones (deleted_at);

-- Who deleted or exported what, and when. tenant_id is NULL only on the record of a
-- tenant's deletion, kept for the operator after everything the tenant owned is gone.
CREATE TABLE audit_log (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id   BIGINT  REFERENCES tenants (id),
    tenant_name TEXT    NOT NULL,
    actor       TEXT    NOT NULL,
    action      TEXT    NOT NULL,
    subject     TEXT    NOT NULL,
    detail      JSONB   NOT NULL DEFAULT '{}',
    at          BIGINT  NOT NULL
);
CREATE INDEX audit_log_tenant ON audit_log (tenant_id, id);

-- Retention and a tenant's deletion walk a tenant's runs by time; deleting a run finds
-- the evaluations that cover it.
CREATE INDEX runs_tenant_time ON runs (tenant_id, run_time, id);
CREATE INDEX evaluation_runs_run ON evaluation_runs (run_pk);
-- A tenant's deletion ends its sessions and deletes its keys (whose deletion checks
-- that no session names them).
CREATE INDEX web_sessions_tenant ON web_sessions (tenant_id);
CREATE INDEX web_sessions_key ON web_sessions (key_id);

-- What redaction replaced in a run, as counts by kind ({"email": 2}); NULL when nothing.
ALTER TABLE runs ADD COLUMN redactions TEXT;

-- +goose Down
ALTER TABLE runs DROP COLUMN redactions;
DROP INDEX web_sessions_key;
DROP INDEX web_sessions_tenant;
DROP INDEX evaluation_runs_run;
DROP INDEX runs_tenant_time;
DROP TABLE audit_log;
DROP TABLE run_tombstones;
