-- A payment's state, and its copy in each webhook delivery, are stored as
-- json (text checked to be valid JSON) instead of jsonb (parsed into a
-- binary tree), as the events' data are (event store migration 0010).
-- Readers take the whole document back and decode it in Go, which jsonb
-- made Postgres rebuild as text on every read; only a few ->> reads look
-- inside in SQL (below). Writing them is where jsonb cost most: a rebuild
-- COPYs every payment's state, some 1.8 kB of text each, and building the
-- tree of 161,503 states took about 3 s of Postgres CPU a million events
-- on a small machine, a tenth of the whole rebuild (9% more events/s
-- without it, in interleaved runs of one kept history).
--
-- The projector's merge still runs on jsonb (projections/payments.go casts
-- the stored state and stores the result's text), so the state keeps
-- jsonb's semantics: || replaces top-level members, a repeated name keeps
-- its last value. The few ->> reads (the deposit and expiry workers' polls,
-- the stalled sweep, the in-flight index's predicate for deposited
-- payments) answer the same on json, parsing its text where jsonb looked
-- the member up.
--
-- This rewrites the payments table once: apply it in a maintenance window
-- on a long history. Stop every ledgerd of an earlier version first: they
-- merge with jsonb's || on the column itself, which json does not have, so
-- their status changes would fail (safely: an append and its projection
-- are one transaction, so nothing is half written) until they are replaced.
ALTER TABLE payments ALTER COLUMN state TYPE json USING state::json;
ALTER TABLE webhook_deliveries ALTER COLUMN payment TYPE json USING payment::json;

-- The type change resets the columns' compression (0012).
DO $$
BEGIN
    ALTER TABLE payments ALTER COLUMN state SET COMPRESSION lz4;
    ALTER TABLE webhook_deliveries ALTER COLUMN payment SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
    RAISE NOTICE 'this Postgres has no lz4: values stay pglz-compressed';
END $$;
