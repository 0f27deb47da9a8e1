-- +goose Up
-- A tenant's published scorers (service/store/published.go). Each version is immutable:
-- a new config, module, judge model or limit is a new version. The PostgreSQL migration of
-- the same number creates the same tables with that backend's types.
CREATE TABLE scorer_versions (
    id          INTEGER PRIMARY KEY,
    tenant_id   INTEGER NOT NULL REFERENCES tenants (id),
    name        TEXT    NOT NULL,
    version     INTEGER NOT NULL,
    kind        TEXT    NOT NULL,               -- configured | wasm
    base        TEXT    NOT NULL DEFAULT '',    -- configured: the scorer it configures
    config      TEXT    NOT NULL DEFAULT '{}',  -- the pinned config
    digest      TEXT    NOT NULL,               -- wasm: the module's sha256; configured: the config hash
    manifest    TEXT    NOT NULL DEFAULT '{}',  -- wasm: limits and the scorer the module carries
    info        TEXT    NOT NULL DEFAULT '{}',  -- the scorer's Info as checked at publish
    judge_model TEXT    NOT NULL DEFAULT '',
    replaces    INTEGER NOT NULL DEFAULT 0,
    created_at  INTEGER NOT NULL,
    deleted_at  INTEGER,
    UNIQUE (tenant_id, name, version)
);

-- The promoted version of a name is its latest promotion; the rows are the history.
CREATE TABLE scorer_promotions (
    id          INTEGER PRIMARY KEY,
    tenant_id   INTEGER NOT NULL REFERENCES tenants (id),
    name        TEXT    NOT NULL,
    version     INTEGER NOT NULL,
    promoted_at INTEGER NOT NULL
);
CREATE INDEX scorer_promotions_name ON scorer_promotions (tenant_id, name, id);

-- Modules are stored once per tenant and digest; never across tenants, so nothing about
-- storing one says whether another tenant has the same bytes.
CREATE TABLE scorer_modules (
    tenant_id  INTEGER NOT NULL REFERENCES tenants (id),
    digest     TEXT    NOT NULL,
    module     BLOB    NOT NULL,
    size       INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, digest)
);

-- What identifies the code and config behind a result besides name and version: a
-- module's digest or a config hash; '' for built-ins and the rows before this migration.
ALTER TABLE results ADD COLUMN scorer_digest TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE results DROP COLUMN scorer_digest;
DROP TABLE scorer_modules;
DROP TABLE scorer_promotions;
DROP TABLE scorer_versions;
