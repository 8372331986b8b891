-- The stalled-payment sweep's index again (0009), for two faults of the
-- sweep (workers/stalled.go):
--  * a held payment whose document has arrived awaits its payout too:
--    heldForDocuments stays true until the conversion clears it, so only
--    "held and no document yet" is left out (domain.Payment.AwaitsPayout);
--  * the sweep pages through the stalled payments in (updated_at, id)
--    order instead of reading the oldest 200 each time, which payments
--    whose step keeps failing (and so never change) would fill for good.
DROP INDEX payments_in_flight;
CREATE INDEX payments_in_flight ON payments (updated_at, id)
    WHERE status = 'transferring'
       OR (status = 'deposited' AND NOT (coalesce((state->>'heldForDocuments')::boolean, false)
                                        AND coalesce((state->>'documents')::int, 0) = 0));
