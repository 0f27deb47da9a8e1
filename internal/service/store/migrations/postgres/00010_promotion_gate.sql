-- +goose Up
-- A promotion made under the tenant's agreement gate keeps what the gate said: both
-- versions' agreement with the labels, the decision, and the override (its reason, who,
-- when) when a refused promotion was forced through. '{}' on a promotion no gate checked.
ALTER TABLE scorer_promotions ADD COLUMN gate JSONB NOT NULL DEFAULT '{}';

-- A scorer version's last measured Cohen's kappa with the tenant's labels (the agreement
-- report and the gate record it): a version under 0.4 raises no critical insight.
ALTER TABLE insight_settings ADD COLUMN kappas JSONB NOT NULL DEFAULT '[]';

-- +goose Down
ALTER TABLE insight_settings DROP COLUMN kappas;
ALTER TABLE scorer_promotions DROP COLUMN gate;
