-- +goose Up
-- A run stored with U+FFFD in place of text no database stores (a NUL, invalid UTF-8, a
-- lone surrogate) says so (store/text.go). The PostgreSQL migration of the same number
-- adds the same column with that backend's type.
ALTER TABLE runs ADD COLUMN repaired INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE runs DROP COLUMN repaired;
