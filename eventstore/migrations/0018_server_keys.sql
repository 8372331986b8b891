-- Keys the instances share to make values only the service can make (the
-- dashboard's CSRF tokens are HMACs under one), by purpose. The first
-- instance that needs a purpose's key stores a random one; the others read
-- it (eventstore/server_keys.go). Like the signing and sealing keys, each
-- is stored wrapped under the master key (wrapped_key: nonce, then the
-- AES-256-GCM ciphertext and tag; kek_id names the master key), so a dump
-- of the database holds none in clear. Replacing a key voids what it made.
CREATE TABLE server_keys (
    purpose     text        PRIMARY KEY,
    wrapped_key bytea       NOT NULL,
    kek_id      text        NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT clock_timestamp()
);
