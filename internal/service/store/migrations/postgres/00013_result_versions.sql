-- +goose Up
-- The versions of each scorer a tenant has results of, and the first evaluation that has
-- each (store.PreviousResults). An evaluation's view compares its results with those of
-- another version of the same scorer; nearly always there is none, and this table says
-- so in one read, where the comparison itself walks every earlier result of every run.
-- A row is written with the first results of its version and not deleted with them: it
-- may only say that a comparison is worth looking for. The SQLite migration of the same
-- number creates the same table with that backend's types.
CREATE TABLE result_versions (
    tenant_id           BIGINT NOT NULL REFERENCES tenants (id),
    scorer              TEXT   NOT NULL,
    scorer_version      TEXT   NOT NULL,
    first_evaluation_id BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, scorer, scorer_version)
);
INSERT INTO result_versions (tenant_id, scorer, scorer_version, first_evaluation_id)
    SELECT tenant_id, scorer, scorer_version, MIN(evaluation_id) FROM results
    GROUP BY tenant_id, scorer, scorer_version;

-- +goose Down
DROP TABLE result_versions;
