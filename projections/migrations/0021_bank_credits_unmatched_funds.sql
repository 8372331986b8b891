-- Bank-transfer deposits from the bank's camt files, and the funds no
-- payment could take.
--
-- deposit_references: the reference each bank-transfer payment tells the
-- payer to quote (depositBankDetails.reference), written with
-- payment.created, so that a credit finds its payment by one index lookup.
-- The reference is a hash of the payment id: it is not unique by
-- constraint, and a credit naming two payments is held as ambiguous.
CREATE TABLE deposit_references (
    payment_id uuid PRIMARY KEY,
    tenant_id  uuid NOT NULL,
    reference  text NOT NULL
);
CREATE INDEX deposit_references_reference ON deposit_references (reference);

INSERT INTO deposit_references (payment_id, tenant_id, reference)
SELECT id, tenant_id, state -> 'depositDetails' ->> 'reference'
FROM payments
WHERE state ->> 'funding' = 'BANK_TRANSFER' AND state -> 'depositDetails' ->> 'reference' IS NOT NULL;

-- bank_credits: each bank entry recorded, by the event that recorded it (a
-- payment's deposit, or unmatched funds). The unique key refuses an entry
-- re-sent in any file, in the transaction of the event that would record
-- it twice.
CREATE TABLE bank_credits (
    event_id    uuid PRIMARY KEY,
    tenant_id   uuid        NOT NULL,
    account     text        NOT NULL,
    entry_ref   text        NOT NULL,
    recorded_at timestamptz NOT NULL,
    CONSTRAINT bank_credits_entry UNIQUE (account, entry_ref)
);

-- unmatched_funds: one row per unmatched item (stream type
-- unmatched_funds), its state as the domain folds it. tenant_id is the
-- tenant whose books hold it; the nil UUID is the operator's.
CREATE TABLE unmatched_funds (
    id         uuid PRIMARY KEY,
    tenant_id  uuid        NOT NULL,
    status     text        NOT NULL,
    state      json        NOT NULL,
    version    integer     NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
);
-- The operator's queue (ledgerctl unmatched list) and a tenant's page of
-- the dashboard.
CREATE INDEX unmatched_funds_status ON unmatched_funds (status, created_at, id);
CREATE INDEX unmatched_funds_tenant ON unmatched_funds (tenant_id, created_at DESC, id DESC);
