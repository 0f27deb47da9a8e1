-- +goose Up
-- A key of scope label writes labels under one labeller's name, the key's, and reads what
-- a labeller needs to see (store.ScopeLabel); '' for the other scopes. The SQLite
-- migration of the same number makes the same change.
ALTER TABLE api_keys ADD COLUMN labeller TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE api_keys DROP COLUMN labeller;
