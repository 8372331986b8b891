-- JWT signing keys, shared by every instance. The newest signs; all verify
-- until the tokens they signed have expired.
CREATE TABLE signing_keys (
    kid        text PRIMARY KEY,
    secret     bytea       NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- Idempotency-Key records (contract §1), written in the same transaction as
-- the request's effect.
CREATE TABLE idempotency_keys (
    scope         text        NOT NULL,
    key           text        NOT NULL,
    request_hash  bytea       NOT NULL,
    status        integer     NOT NULL,
    content_type  text        NOT NULL,
    body          bytea       NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (scope, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
