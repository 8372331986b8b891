-- Double-entry postings (issue: auditors), one row per posting line of a
-- money event, written inline. Balances at any time are sums over them.
CREATE TABLE ledger_postings (
    event_id    uuid        NOT NULL,
    line        integer     NOT NULL,
    tenant_id   uuid        NOT NULL,
    recorded_at timestamptz NOT NULL,
    account     text        NOT NULL,
    currency    text        NOT NULL,
    side        text        NOT NULL CHECK (side IN ('debit', 'credit')),
    amount      numeric     NOT NULL CHECK (amount > 0),
    PRIMARY KEY (event_id, line)
);
CREATE INDEX ledger_postings_tenant ON ledger_postings (tenant_id, recorded_at);
