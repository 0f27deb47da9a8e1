-- +goose Up
-- A person's judgement of a run for a scorer, or for a criterion several scorers share
-- (the column scorer holds either name). One label per (run, scorer, labeller): a person
-- who labels again replaces their label; several people label the same run apart.
-- Exactly one of passed, score and choice is set, except that a choice may carry the
-- score its rubric gives it. A label goes with its run (ON DELETE CASCADE), so deleting a
-- run deletes its labels. The PostgreSQL migration of the same number creates the same
-- table with that backend's types.
CREATE TABLE labels (
    id         INTEGER PRIMARY KEY,
    tenant_id  INTEGER NOT NULL REFERENCES tenants (id),
    run_pk     INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    scorer     TEXT    NOT NULL,
    labeller   TEXT    NOT NULL,
    passed     INTEGER,
    score      REAL,
    choice     TEXT,
    note       TEXT    NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    UNIQUE (tenant_id, run_pk, scorer, labeller)
);
CREATE INDEX labels_tenant_scorer ON labels (tenant_id, scorer, id);
CREATE INDEX labels_run ON labels (run_pk);
-- A scorer's latest results of a tenant: the runs worth reviewing, the versions used.
CREATE INDEX results_tenant_scorer ON results (tenant_id, scorer, id);

-- +goose Down
DROP INDEX results_tenant_scorer;
DROP TABLE labels;
