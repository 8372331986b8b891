-- The Lightning payout rail's books: one row per idempotency key it was
-- called with. The invoice it resolved from the recipient's LNURL is stored
-- here BEFORE it is paid, so a repeated call (redelivery, crash, another
-- process) pays that same invoice, which LND pays at most once per payment
-- hash, and never resolves a second one. The recipient's address is not
-- stored: it is personal, and the payment's stream has it.
CREATE TABLE lightning_payouts (
    idempotency_key text PRIMARY KEY,
    payment_id      uuid        NOT NULL,
    amount_msat     bigint      NOT NULL,
    payment_request text        NOT NULL DEFAULT '', -- '' when refused before an invoice was accepted
    payment_hash    text        NOT NULL DEFAULT '', -- lowercase hex
    status          text        NOT NULL,            -- pending, paid or failed
    reason          text        NOT NULL DEFAULT '', -- why it failed
    preimage        text        NOT NULL DEFAULT '', -- proof of payment, when LND told us
    fee_msat        bigint      NOT NULL DEFAULT 0,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
