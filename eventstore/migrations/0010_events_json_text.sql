-- An event's data and metadata are stored as json (the text the domain
-- wrote, checked to be valid JSON) instead of jsonb (parsed into a binary
-- tree). Nothing queries inside them in SQL: every reader (the relay, the
-- history API, the audit, the export, a rebuild) takes the whole document
-- back as text, and jsonb rebuilds that text on every read, escaping
-- each string again. That was some 3 s of Postgres CPU per million events
-- read, a tenth of a 1M-event rebuild, and every append parsed the tree
-- in the first place.
--
-- The chain hash is unchanged: it covers the RFC 8785 canonical form of
-- the data (eventstore/hash.go), the same for jsonb's text and the
-- domain's. Member order and spacing of the text now are the domain's.
--
-- Older processes still append through jsonb parameters; Postgres's
-- assignment cast from jsonb to json stores their text.
--
-- This rewrites the events table and its indexes once, holding writes to
-- it meanwhile (some 10 s per million events on a small machine): apply it
-- in a maintenance window on a long history.
ALTER TABLE events
    ALTER COLUMN data TYPE json USING data::json,
    ALTER COLUMN metadata TYPE json USING metadata::json;

-- The type change resets the columns' compression (0009).
DO $$
BEGIN
    ALTER TABLE events ALTER COLUMN data SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
    RAISE NOTICE 'this Postgres has no lz4: values stay pglz-compressed';
END $$;
