-- The M-Pesa rail's books. A push is stored, keyed by its payment, before
-- the prompt is sent, and a claim (posted) lets one process send it: a
-- repeat, another process or a restart queries the prompt instead of
-- prompting the payer again. The token is the secret part of the
-- prompt's callback URL (Daraja callbacks carry no signature).
CREATE TABLE mpesa_pushes (
    payment_id    uuid PRIMARY KEY,
    tenant_id     uuid        NOT NULL,
    token         text        NOT NULL UNIQUE,
    amount        bigint      NOT NULL, -- whole shillings asked for
    phone         text        NOT NULL, -- the MSISDN prompted, 2547XXXXXXXX
    posted        boolean     NOT NULL DEFAULT false, -- the prompt may have reached Daraja
    checkout_id   text        NOT NULL DEFAULT '',    -- CheckoutRequestID
    status        text        NOT NULL DEFAULT 'pending', -- pending, paid or unpaid
    receipt       text        NOT NULL DEFAULT '',
    paid_at       timestamptz,
    reason        text        NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);

-- One row per B2C payout, keyed by its OriginatorConversationID (the
-- payout's idempotency key), stored before the payment is asked for: a
-- payout found posted is recovered with a Transaction Status query, never
-- sent again.
CREATE TABLE mpesa_payouts (
    originator_id   text PRIMARY KEY,
    tenant_id       uuid        NOT NULL,
    payment_id      uuid        NOT NULL,
    token           text        NOT NULL UNIQUE,
    amount          bigint      NOT NULL, -- whole shillings
    posted          boolean     NOT NULL DEFAULT false,
    conversation_id text        NOT NULL DEFAULT '',
    status          text        NOT NULL DEFAULT 'pending', -- pending, success or failed
    receipt         text        NOT NULL DEFAULT '',
    reason          text        NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
