-- +goose Up
-- An evaluation's next place for a run (store.Evaluation.Positions). It was its run count,
-- which a deletion lowers: a run joining an arrival evaluation afterwards took a place a
-- job had covered already and was never scored. Existing rows take the highest of their
-- runs, what was handed to jobs and the places given. The SQLite migration of the same
-- number does the same.
ALTER TABLE evaluations ADD COLUMN positions BIGINT NOT NULL DEFAULT 0;
UPDATE evaluations SET positions = GREATEST(runs, queued,
    (SELECT COALESCE(MAX(er.position) + 1, 0) FROM evaluation_runs er WHERE er.evaluation_id = evaluations.id));

-- +goose Down
ALTER TABLE evaluations DROP COLUMN positions;
