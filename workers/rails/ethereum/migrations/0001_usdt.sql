-- The USDT rail's books. Each payment's deposit address has a sequence
-- index: the last step of its BIP-32 path under LEDGER_USDT_XPUB, stored
-- once, so every process gives the payment the same address.
CREATE SEQUENCE usdt_address_index AS integer MINVALUE 0 START 0 MAXVALUE 2147483647 NO CYCLE;

CREATE TABLE usdt_addresses (
    payment_id uuid PRIMARY KEY,
    tenant_id  uuid        NOT NULL,
    idx        integer     NOT NULL UNIQUE DEFAULT nextval('usdt_address_index'),
    address    text        NOT NULL UNIQUE, -- lowercase 0x + 40 hex, as logs carry it
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX usdt_addresses_recent ON usdt_addresses (created_at);

-- The watcher's cursor: the first block of the token's logs not read yet.
-- A poll holds the row locked, so one process reads a range at a time.
CREATE TABLE usdt_cursor (
    contract   text PRIMARY KEY, -- lowercase 0x + 40 hex
    next_block bigint      NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- Every confirmed Transfer log to a deposit address, once per (tx hash,
-- log index): credited to its payment, or unmatched (the payment expired,
-- was already deposited, or the amount is under a cent) for an operator.
CREATE TABLE usdt_transfers (
    tx_hash      text        NOT NULL,
    log_index    bigint      NOT NULL,
    block_number bigint      NOT NULL,
    block_time   timestamptz NOT NULL,
    address      text        NOT NULL,
    payment_id   uuid        NOT NULL,
    tenant_id    uuid        NOT NULL,
    amount       numeric     NOT NULL, -- USDT, the token's 6 decimals
    status       text        NOT NULL DEFAULT 'seen', -- seen, credited or unmatched
    reason       text        NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tx_hash, log_index)
);
CREATE INDEX usdt_transfers_address ON usdt_transfers (address);
