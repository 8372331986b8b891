-- Keys that seal secrets a partner gives the service and the service must
-- use again (a payment's webhookSecret), so the events and read models
-- that carry them hold a sealed form that no read API, export or dashboard
-- reveals (eventstore/sealer.go). Shared by every instance; never deleted:
-- a value sealed with a key needs it for as long as the value is used.
CREATE TABLE sealing_keys (
    kid        text        PRIMARY KEY CHECK (kid ~ '^[A-Za-z0-9_-]+$'),
    key        bytea       NOT NULL CHECK (octet_length(key) = 32),
    created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
