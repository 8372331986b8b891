-- The sandbox rail also pays payers their change back (payout.Request's
-- Refund). A refund is its own row, keyed by its own idempotency key, and
-- is neither listed among the payment's payouts (GET /sandbox/payouts,
-- where a second item is a double payout) nor counted in their calls.
ALTER TABLE sandbox_payouts ADD COLUMN refund boolean NOT NULL DEFAULT false;
