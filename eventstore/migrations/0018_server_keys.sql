-- Keys the instances share to make values only the service can make (the
-- dashboard's CSRF tokens are HMACs under one), by purpose. The first
-- instance that needs a purpose's key stores a random one; the others read
-- it (eventstore/server_keys.go). Replacing a key voids what it made.
CREATE TABLE server_keys (
    purpose    text        PRIMARY KEY,
    key        bytea       NOT NULL CHECK (octet_length(key) = 32),
    created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
