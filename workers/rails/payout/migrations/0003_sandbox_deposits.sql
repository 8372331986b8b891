-- The sandbox rail's book of the deposits it delivered (POST
-- /sandbox/payments/{id}/deposit), as a provider keeps its own records:
-- what reconciliation compares the ledger's deposits with. The id is the
-- reference the deposit event carries.
CREATE TABLE sandbox_deposits (
    id          uuid PRIMARY KEY,
    payment_id  uuid        NOT NULL,
    rail        text        NOT NULL, -- the funding rail: LIGHTNING, BANK_TRANSFER, MOMO or USDT
    amount      numeric     NOT NULL, -- in the ledger's unit: sats, or the currency's major unit
    currency    text        NOT NULL, -- as the ledger's postings name it ("sats" for Bitcoin)
    received_at timestamptz NOT NULL
);
CREATE INDEX sandbox_deposits_received ON sandbox_deposits (received_at);
CREATE INDEX sandbox_payouts_created ON sandbox_payouts (created_at);
