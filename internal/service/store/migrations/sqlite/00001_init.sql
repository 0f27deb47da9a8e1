-- +goose Up
-- Times are Unix microseconds; JSON is text. The PostgreSQL migration of the same number
-- creates the same tables with that backend's types.
CREATE TABLE tenants (
    id         INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL UNIQUE,
    policy     TEXT    NOT NULL DEFAULT '{}',
    created_at INTEGER NOT NULL
);

CREATE TABLE api_keys (
    id         INTEGER PRIMARY KEY,
    tenant_id  INTEGER NOT NULL REFERENCES tenants (id),
    hash       BLOB    NOT NULL UNIQUE,
    prefix     TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
);
CREATE INDEX api_keys_tenant ON api_keys (tenant_id);

-- id is the ingest sequence: it breaks ties between runs of the same time.
CREATE TABLE runs (
    id          INTEGER PRIMARY KEY,
    tenant_id   INTEGER NOT NULL REFERENCES tenants (id),
    run_id      TEXT    NOT NULL,
    agent       TEXT    NOT NULL,
    run_time    INTEGER NOT NULL,
    received_at INTEGER NOT NULL,
    body        TEXT    NOT NULL,
    UNIQUE (tenant_id, run_id)
);
CREATE INDEX runs_agent_time ON runs (tenant_id, agent, run_time DESC, id DESC);

CREATE TABLE evaluations (
    id         INTEGER PRIMARY KEY,
    public_id  TEXT    NOT NULL UNIQUE,
    tenant_id  INTEGER NOT NULL REFERENCES tenants (id),
    agent      TEXT    NOT NULL,
    trigger    TEXT    NOT NULL,
    spec       TEXT    NOT NULL,
    runs       INTEGER NOT NULL,
    expected   INTEGER NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX evaluations_tenant_agent ON evaluations (tenant_id, agent, id);

CREATE TABLE evaluation_runs (
    evaluation_id INTEGER NOT NULL REFERENCES evaluations (id),
    run_pk        INTEGER NOT NULL REFERENCES runs (id),
    position      INTEGER NOT NULL,
    PRIMARY KEY (evaluation_id, run_pk)
);

-- Every result is kept; a job retried after a crash writes a (evaluation, run, scorer)
-- result once.
CREATE TABLE results (
    id             INTEGER PRIMARY KEY,
    tenant_id      INTEGER NOT NULL REFERENCES tenants (id),
    evaluation_id  INTEGER NOT NULL REFERENCES evaluations (id),
    run_pk         INTEGER NOT NULL REFERENCES runs (id),
    scorer         TEXT    NOT NULL,
    scorer_version TEXT    NOT NULL,
    judge_model    TEXT    NOT NULL DEFAULT '',
    status         TEXT    NOT NULL,
    score          REAL,
    passed         INTEGER,
    result         TEXT    NOT NULL,
    created_at     INTEGER NOT NULL,
    UNIQUE (evaluation_id, run_pk, scorer)
);
CREATE INDEX results_run_scorer ON results (run_pk, scorer, id);

CREATE TABLE agent_policies (
    tenant_id  INTEGER NOT NULL REFERENCES tenants (id),
    agent      TEXT    NOT NULL,
    policy     TEXT    NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, agent)
);

-- +goose Down
DROP TABLE agent_policies;
DROP TABLE results;
DROP TABLE evaluation_runs;
DROP TABLE evaluations;
DROP TABLE runs;
DROP TABLE api_keys;
DROP TABLE tenants;
