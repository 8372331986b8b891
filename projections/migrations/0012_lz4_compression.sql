-- The payment's state is rewritten, and so compressed again, by every
-- status event, and copied into each webhook delivery: lz4 compresses it
-- several times faster than pglz, the default (see the event store's
-- migration 0009). Only values written from now on use it. A server built
-- without lz4 keeps pglz.
DO $$
BEGIN
    ALTER TABLE payments ALTER COLUMN state SET COMPRESSION lz4;
    ALTER TABLE webhook_deliveries ALTER COLUMN payment SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
    RAISE NOTICE 'this Postgres has no lz4: values stay pglz-compressed';
END $$;
