-- +goose Up
-- Times are Unix microseconds; JSON is JSONB. The SQLite migration of the same number
-- creates the same tables with that backend's types.
CREATE TABLE tenants (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name       TEXT    NOT NULL UNIQUE,
    policy     JSONB   NOT NULL DEFAULT '{}',
    created_at BIGINT  NOT NULL
);

CREATE TABLE api_keys (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id  BIGINT  NOT NULL REFERENCES tenants (id),
    hash       BYTEA   NOT NULL UNIQUE,
    prefix     TEXT    NOT NULL,
    created_at BIGINT  NOT NULL,
    revoked_at BIGINT
);
CREATE INDEX api_keys_tenant ON api_keys (tenant_id);

-- id is the ingest sequence: it breaks ties between runs of the same time.
CREATE TABLE runs (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id   BIGINT  NOT NULL REFERENCES tenants (id),
    run_id      TEXT    NOT NULL,
    agent       TEXT    NOT NULL,
    run_time    BIGINT  NOT NULL,
    received_at BIGINT  NOT NULL,
    body        JSONB   NOT NULL,
    UNIQUE (tenant_id, run_id)
);
CREATE INDEX runs_agent_time ON runs (tenant_id, agent, run_time DESC, id DESC);

CREATE TABLE evaluations (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    public_id  TEXT    NOT NULL UNIQUE,
    tenant_id  BIGINT  NOT NULL REFERENCES tenants (id),
    agent      TEXT    NOT NULL,
    trigger    TEXT    NOT NULL,
    spec       JSONB   NOT NULL,
    runs       BIGINT  NOT NULL,
    expected   BIGINT  NOT NULL,
    created_at BIGINT  NOT NULL
);
CREATE INDEX evaluations_tenant_agent ON evaluations (tenant_id, agent, id);

CREATE TABLE evaluation_runs (
    evaluation_id BIGINT  NOT NULL REFERENCES evaluations (id),
    run_pk        BIGINT  NOT NULL REFERENCES runs (id),
    position      BIGINT  NOT NULL,
    PRIMARY KEY (evaluation_id, run_pk)
);

-- Every result is kept; a job retried after a crash writes a (evaluation, run, scorer)
-- result once.
CREATE TABLE results (
    id             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id      BIGINT  NOT NULL REFERENCES tenants (id),
    evaluation_id  BIGINT  NOT NULL REFERENCES evaluations (id),
    run_pk         BIGINT  NOT NULL REFERENCES runs (id),
    scorer         TEXT    NOT NULL,
    scorer_version TEXT    NOT NULL,
    judge_model    TEXT    NOT NULL DEFAULT '',
    status         TEXT    NOT NULL,
    score          DOUBLE PRECISION,
    passed         BOOLEAN,
    result         JSONB   NOT NULL,
    created_at     BIGINT  NOT NULL,
    UNIQUE (evaluation_id, run_pk, scorer)
);
CREATE INDEX results_run_scorer ON results (run_pk, scorer, id);

CREATE TABLE agent_policies (
    tenant_id  BIGINT  NOT NULL REFERENCES tenants (id),
    agent      TEXT    NOT NULL,
    policy     JSONB   NOT NULL,
    updated_at BIGINT  NOT NULL,
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
