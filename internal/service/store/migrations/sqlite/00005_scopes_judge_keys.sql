-- +goose Up
-- Keys get a scope (ingest, read or admin); the keys made before scopes could do
-- everything, so they become admin keys. The PostgreSQL migration of the same number
-- makes the same change with that backend's types.
ALTER TABLE api_keys ADD COLUMN scope TEXT NOT NULL DEFAULT 'admin';

-- A tenant's own API key for a judge endpoint the operator allows: only the sealed form
-- is kept (XChaCha20-Poly1305 under the operator's secret key, bound to the tenant and
-- the endpoint; service/secrets). The key is never stored in the clear nor returned.
CREATE TABLE tenant_judge_keys (
    tenant_id  INTEGER NOT NULL REFERENCES tenants (id),
    endpoint   TEXT    NOT NULL,
    sealed     BLOB    NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, endpoint)
);

-- +goose Down
DROP TABLE tenant_judge_keys;
ALTER TABLE api_keys DROP COLUMN scope;
