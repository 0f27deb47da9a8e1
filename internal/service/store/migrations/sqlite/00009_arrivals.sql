-- +goose Up
-- Runs that arrive for an agent under a policy join the agent's open arrival evaluation
-- (at most one per tenant and agent) instead of making one evaluation each. open marks
-- it; queued counts its runs (by position) handed to jobs so far; flushing is set while
-- a job that hands the rest to jobs is waiting. The PostgreSQL migration of the same
-- number adds the same columns with that backend's types.
ALTER TABLE evaluations ADD COLUMN open INTEGER NOT NULL DEFAULT 0;
ALTER TABLE evaluations ADD COLUMN queued INTEGER NOT NULL DEFAULT 0;
ALTER TABLE evaluations ADD COLUMN flushing INTEGER NOT NULL DEFAULT 0;
CREATE UNIQUE INDEX evaluations_open_arrival ON evaluations (tenant_id, agent) WHERE open = 1;

-- +goose Down
DROP INDEX evaluations_open_arrival;
ALTER TABLE evaluations DROP COLUMN flushing;
ALTER TABLE evaluations DROP COLUMN queued;
ALTER TABLE evaluations DROP COLUMN open;
