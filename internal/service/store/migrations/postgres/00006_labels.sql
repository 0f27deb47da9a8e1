-- +goose Up
-- A person's judgement of a run for a scorer, or for a criterion several scorers share
-- (the column scorer holds either name). One label per (run, scorer, labeller): a person
-- who labels again replaces their label; several people label the same run apart.
-- Exactly one of passed, score and choice is set, except that a choice may carry the
-- score its rubric gives it. A label goes with its run (ON DELETE CASCADE), so deleting a
-- run deletes its labels. The SQLite migration of the same number creates the same
-- table with that backend's types.
CREATE TABLE labels (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id  BIGINT  NOT NULL REFERENCES tenants (id),
    run_pk     BIGINT  NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    scorer     TEXT    NOT NULL,
    labeller   TEXT    NOT NULL,
    passed     BOOLEAN,
    score      DOUBLE PRECISION,
    choice     TEXT,
    note       TEXT    NOT NULL DEFAULT '',
    created_at BIGINT  NOT NULL,
    updated_at BIGINT  NOT NULL,
    UNIQUE (tenant_id, run_pk, scorer, labeller)
);
CREATE INDEX labels_tenant_scorer ON labels (tenant_id, scorer, id);
CREATE INDEX labels_run ON labels (run_pk);
-- A scorer's latest results of a tenant: the runs worth reviewing, the versions used.
CREATE INDEX results_tenant_scorer ON results (tenant_id, scorer, id);

-- +goose Down
DROP INDEX results_tenant_scorer;
DROP TABLE labels;
