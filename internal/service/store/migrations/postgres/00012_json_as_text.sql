-- +goose Up
-- A run's body and a result are kept as the JSON text the service wrote, as SQLite keeps
-- them. No query looks inside them, and JSONB cost on both ends: parsing on every insert,
-- printing on every read (a chunk's runs read 35% faster as text, imports store ~20% more
-- runs a second; BENCHMARKS.md). Reading back gives the bytes stored, as on SQLite. The
-- text is compressed with lz4 where the server has it (Debian's does): faster than the
-- default pglz on the bodies large enough to be compressed at all.
--
-- Changing a column's type rewrites its table under a lock that stops writers and readers:
-- ~12 s a million runs on a 2-vCPU machine. So a store of more than 100,000 runs or
-- 1,000,000 results keeps its JSONB columns, which the service writes and reads the same
-- way (the text goes in and comes out as text); its operator converts them in a window of
-- their choosing with the two ALTER TABLE ... TYPE TEXT statements below (RATIONALE.md).
-- +goose StatementBegin
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM runs OFFSET 100000 LIMIT 1) OR EXISTS (SELECT 1 FROM results OFFSET 1000000 LIMIT 1) THEN
        RAISE NOTICE 'runs.body and results.result stay JSONB: the store is too large to rewrite now';
        RETURN;
    END IF;
    ALTER TABLE runs ALTER COLUMN body TYPE TEXT USING body::text;
    ALTER TABLE results ALTER COLUMN result TYPE TEXT USING result::text;
    BEGIN
        ALTER TABLE runs ALTER COLUMN body SET COMPRESSION lz4;
        ALTER TABLE results ALTER COLUMN result SET COMPRESSION lz4;
    EXCEPTION WHEN feature_not_supported THEN
        RAISE NOTICE 'this server has no lz4: run bodies and results are compressed with pglz';
    END;
END
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
DO $$
BEGIN
    IF (SELECT data_type FROM information_schema.columns WHERE table_schema = current_schema()
        AND table_name = 'results' AND column_name = 'result') = 'text' THEN
        ALTER TABLE results ALTER COLUMN result TYPE JSONB USING result::jsonb;
    END IF;
    IF (SELECT data_type FROM information_schema.columns WHERE table_schema = current_schema()
        AND table_name = 'runs' AND column_name = 'body') = 'text' THEN
        ALTER TABLE runs ALTER COLUMN body TYPE JSONB USING body::jsonb;
    END IF;
END
$$;
-- +goose StatementEnd
