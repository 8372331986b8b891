-- webhook_attempts had two B-trees: its primary key (event_id, attempt),
-- which the projector's ON CONFLICT DO NOTHING relies on, and
-- (payment_id, at), which lists a payment's attempts. A delivery's event
-- belongs to the payment whose attempt it is, so (payment_id, event_id,
-- attempt) is unique exactly when (event_id, attempt) is; as the primary
-- key it serves both: a payment's attempts are a range of it (a few rows,
-- sorted by time when listed), and `audit verify` reads the table in its
-- order. Each webhook attempt now writes one index entry instead of two,
-- and a rebuild builds one index over the 350,000 attempts of a 1M-event
-- history instead of two (0.23-0.30 s of Postgres's CPU against
-- 0.44-0.58 s in six interleaved runs; the fold writes them in payment
-- order). An earlier ledgerd still running writes its attempts as before:
-- its INSERT names no conflict target. (Deduplication, off on the index
-- this drops (0017), is never tried on a unique index's build, nor on its
-- inserts unless a leaf holds versions of one key.) The new key is built
-- under the table's lock, some 0.3 s per 350,000 attempts on a small
-- machine, while other ledgerds' webhook attempts wait for it.
ALTER TABLE webhook_attempts DROP CONSTRAINT webhook_attempts_pkey;
DROP INDEX webhook_attempts_payment;
ALTER TABLE webhook_attempts ADD CONSTRAINT webhook_attempts_pkey PRIMARY KEY (payment_id, event_id, attempt);
