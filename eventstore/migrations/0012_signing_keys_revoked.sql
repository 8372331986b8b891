-- A signing key can be revoked (ledgerctl keys rotate --revoke-previous):
-- from then on nothing it signed verifies, so a leaked key stops working
-- at once instead of when the tokens it signed would have expired.
-- Without revocation a superseded key verifies only what it can have
-- signed before every instance stopped signing with it (eventstore.Keys).
ALTER TABLE signing_keys ADD COLUMN revoked_at timestamptz;
