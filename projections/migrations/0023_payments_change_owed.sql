-- The successful payments whose change is owed and not yet paid back:
-- the change refund worker's stalled sweep (workers/change_refunds.go)
-- reads the pending and sending ones, ledgerctl change list the queued
-- ones. Few at any time; the rest of the payments are not in the index.
CREATE INDEX payments_change_owed ON payments (id) WITH (deduplicate_items = off)
    WHERE status = 'success' AND state->>'changeRefundStatus' IN ('pending', 'sending', 'queued');
