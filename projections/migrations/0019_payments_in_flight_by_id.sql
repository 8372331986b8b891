-- The stalled-payment sweep's index keyed by id instead of (updated_at, id)
-- (0013), so that no index of the payments has updated_at in it: an UPDATE
-- that changes no indexed column can be a HOT update, writing neither an
-- entry in each of the table's seven indexes nor the whole new row to the
-- WAL when it fits on its page. Each webhook attempt moves only a
-- payment's version and updated_at (projectWebhookAttempt), four of every
-- settled payment's seven updates. The sweep (workers/stalled.go) reads the
-- in-flight payments through the index's predicate, a few hundred rows even
-- when a rail is down for minutes, and sorts them by when they last moved.
-- The new index is built in one scan of the payments under the table's
-- lock (80 ms for 161,503 payments, 315 MB, on a small machine), while
-- other ledgerds' payment writes wait for it; their sweeps read the new
-- index as they read the old one.
DROP INDEX payments_in_flight;
CREATE INDEX payments_in_flight ON payments (id) WITH (deduplicate_items = off)
    WHERE status = 'transferring'
       OR (status = 'deposited' AND NOT (coalesce((state->>'heldForDocuments')::boolean, false)
                                        AND coalesce((state->>'documents')::int, 0) = 0));
