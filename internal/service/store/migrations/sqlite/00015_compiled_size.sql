-- +goose Up
-- The bytes of a module's compiled code as the check at publish measured them (the
-- compilation cache folder of the tenant's module): they count toward the tenant's
-- stored bytes while a version that is not deleted needs the module. 0 for a module
-- stored before this migration until a process compiles it again. The PostgreSQL migration of
-- the same number makes the same change.
ALTER TABLE scorer_modules ADD COLUMN compiled_size INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE scorer_modules DROP COLUMN compiled_size;
