-- Payments a worker still has to move on: deposited and not waiting for a
-- document, or transferring (their payout intent recorded). The stalled-
-- payment sweep (workers/stalled.go) reads them oldest first, to finish
-- those whose JetStream message was given up on as a dead letter.
CREATE INDEX payments_in_flight ON payments (updated_at)
    WHERE status = 'transferring'
       OR (status = 'deposited' AND NOT coalesce((state->>'heldForDocuments')::boolean, false));
