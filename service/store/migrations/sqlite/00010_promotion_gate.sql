-- +goose Up
-- A promotion made under the tenant's agreement gate keeps what the gate said: both
-- versions' agreement with the labels, the decision, and the override (its reason, who,
-- when) when a refused promotion was forced through. '{}' on a promotion no gate checked.
ALTER TABLE scorer_promotions ADD COLUMN gate TEXT  NOT NULL DEFAULT '{}';

-- +goose Down
ALTER TABLE scorer_promotions DROP COLUMN gate;
