-- +goose Up
-- Insights, the series they are computed on, a tenant's insight settings and the
-- dashboard's sessions. The PostgreSQL migration of the same number creates the same
-- tables with that backend's types.

-- An insight is one finding about one (tenant, agent, scorer) of one kind. At most one
-- is open per (tenant, agent, scorer, kind); resolved ones are kept for the record.
-- public_id is random, as evaluations' are: ids tell nothing about other tenants.
CREATE TABLE insights (
    id          INTEGER PRIMARY KEY,
    public_id   TEXT    NOT NULL UNIQUE,
    tenant_id   INTEGER NOT NULL REFERENCES tenants (id),
    agent       TEXT    NOT NULL,
    scorer      TEXT    NOT NULL,
    kind        TEXT    NOT NULL,
    severity    TEXT    NOT NULL,
    title       TEXT    NOT NULL,
    evidence    TEXT    NOT NULL,
    opened_at   INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    resolved_at INTEGER
);
CREATE UNIQUE INDEX insights_open ON insights (tenant_id, agent, scorer, kind) WHERE resolved_at IS NULL;
CREATE INDEX insights_agent ON insights (tenant_id, agent, id);
CREATE INDEX insights_tenant ON insights (tenant_id, id);

-- A series is an (agent, scorer) with results. Storing its results (or changing its
-- settings) counts a change; its insight update locks the row and records the changes it
-- saw, so that one update runs at a time per series, none misses results stored while it
-- ran, and the series is up to date when assessed = changes.
CREATE TABLE insight_series (
    tenant_id   INTEGER NOT NULL REFERENCES tenants (id),
    agent       TEXT    NOT NULL,
    scorer      TEXT    NOT NULL,
    changes     INTEGER NOT NULL DEFAULT 1,
    assessed    INTEGER NOT NULL DEFAULT 0,
    changed_at  INTEGER NOT NULL,
    assessed_at INTEGER,
    PRIMARY KEY (tenant_id, agent, scorer)
);

-- A tenant's insight settings: the scorers it marks experimental, and the webhook that
-- is told about new critical insights (the secret signs each body; it is shown once).
CREATE TABLE insight_settings (
    tenant_id      INTEGER PRIMARY KEY REFERENCES tenants (id),
    experimental   TEXT    NOT NULL DEFAULT '[]',
    webhook_url    TEXT    NOT NULL DEFAULT '',
    webhook_secret TEXT    NOT NULL DEFAULT '',
    updated_at     INTEGER NOT NULL
);

-- A dashboard session: the SHA-256 of the cookie's random token, the tenant and the key
-- it was opened with (none in open mode); revoking the key ends it.
CREATE TABLE web_sessions (
    hash       BLOB    PRIMARY KEY,
    tenant_id  INTEGER NOT NULL REFERENCES tenants (id),
    key_id     INTEGER REFERENCES api_keys (id),
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);
CREATE INDEX web_sessions_expires ON web_sessions (expires_at);

-- An evaluation's results are paged in the order of its runs.
CREATE INDEX evaluation_runs_position ON evaluation_runs (evaluation_id, position);

-- +goose Down
DROP INDEX evaluation_runs_position;
DROP TABLE web_sessions;
DROP TABLE insight_settings;
DROP TABLE insight_series;
DROP TABLE insights;
