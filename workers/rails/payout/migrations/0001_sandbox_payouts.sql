-- The sandbox payout rail's own books (contract §7), shared by every
-- instance like a real bank's: one row per payout it executed, unique by
-- the idempotency key it was called with, and a count of every call.
CREATE TABLE sandbox_payouts (
    id              uuid PRIMARY KEY,
    payment_id      uuid        NOT NULL,
    idempotency_key text        NOT NULL UNIQUE,
    rail            text        NOT NULL,
    amount          numeric     NOT NULL,
    currency        text        NOT NULL,
    destination     text        NOT NULL,
    status          text        NOT NULL, -- completed or failed
    reason          text        NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sandbox_payouts_payment ON sandbox_payouts (payment_id);

CREATE TABLE sandbox_payout_calls (
    payment_id uuid PRIMARY KEY,
    calls      bigint NOT NULL
);
