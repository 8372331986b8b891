-- The Paystack payout rail's books: one row per payout (its idempotency
-- key is the transfer's reference, which Paystack makes one transfer for),
-- stored before the transfer is asked for, so a repeated call, a crash or
-- another process finds it and verifies instead of guessing. The bank
-- account is not stored: it is personal, and the payment's stream has it.
CREATE TABLE paystack_transfers (
    reference     text PRIMARY KEY,
    tenant_id     uuid        NOT NULL,
    payment_id    uuid        NOT NULL,
    amount        bigint      NOT NULL, -- in the currency's subunit
    currency      text        NOT NULL,
    posted        boolean     NOT NULL DEFAULT false, -- a POST /transfer may have reached Paystack
    transfer_code text        NOT NULL DEFAULT '',
    status        text        NOT NULL, -- pending, success, failed or reversed (after success)
    reason        text        NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);

-- Transfer recipients, one per bank account, keyed by a hash of the
-- currency, bank code and account number: Paystack answers a repeated
-- account with the same recipient, and the cache saves the call.
CREATE TABLE paystack_recipients (
    account_hash   text PRIMARY KEY,
    recipient_code text        NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now()
);
