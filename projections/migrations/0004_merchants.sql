-- Merchants (contract §5): one row per merchant, written inline from
-- merchant.created. Columns a payout method does not use hold ''.
CREATE TABLE merchants (
    id             uuid PRIMARY KEY,
    tenant_id      uuid        NOT NULL,
    name           text        NOT NULL,
    country        text        NOT NULL,
    currency       text        NOT NULL,
    payout_method  text        NOT NULL,
    bank_name      text        NOT NULL,
    account_number text        NOT NULL,
    phone_number   text        NOT NULL,
    lnurl          text        NOT NULL,
    version        integer     NOT NULL,
    created_at     timestamptz NOT NULL,
    updated_at     timestamptz NOT NULL
);
-- GET /merchants: newest first, keyset-paged by (created_at, id).
CREATE INDEX merchants_tenant_created ON merchants (tenant_id, created_at DESC, id DESC);
