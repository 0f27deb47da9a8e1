-- +goose Up
-- A run's body and a result are kept as the JSON text the service wrote, as SQLite keeps
-- them. No query looks inside them, and JSONB cost on both ends: parsing on every insert,
-- printing on every read (a chunk's runs read 35% faster as text, imports store 20% more
-- runs a second; BENCHMARKS.md). Reading back gives the same bytes on both backends. The
-- text is compressed with lz4 where the server has it (Debian's does): faster than the
-- default pglz on the bodies large enough to be compressed at all.
ALTER TABLE runs ALTER COLUMN body TYPE TEXT USING body::text;
ALTER TABLE results ALTER COLUMN result TYPE TEXT USING result::text;
-- +goose StatementBegin
DO $$
BEGIN
    ALTER TABLE runs ALTER COLUMN body SET COMPRESSION lz4;
    ALTER TABLE results ALTER COLUMN result SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
    RAISE NOTICE 'this server has no lz4: run bodies and results are compressed with pglz';
END
$$;
-- +goose StatementEnd

-- +goose Down
ALTER TABLE results ALTER COLUMN result TYPE JSONB USING result::jsonb;
ALTER TABLE runs ALTER COLUMN body TYPE JSONB USING body::jsonb;
