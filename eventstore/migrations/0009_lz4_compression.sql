-- Large values (an event's data, a stored idempotent response: a payment's
-- runs to 2-3 kB) are compressed when the row is written. pglz, the
-- default, was the costliest single function of Postgres in a POST
-- /payments profile; lz4 compresses several times faster for a slightly
-- larger result. Only values written from now on use it: old ones stay
-- pglz, and Postgres reads both. A server built without lz4 keeps pglz.
DO $$
BEGIN
    ALTER TABLE events ALTER COLUMN data SET COMPRESSION lz4;
    ALTER TABLE idempotency_keys ALTER COLUMN body SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
    RAISE NOTICE 'this Postgres has no lz4: values stay pglz-compressed';
END $$;
