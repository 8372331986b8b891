-- Read models written inline, in the transaction of the events they reflect.
CREATE TABLE tenants (
    id            uuid PRIMARY KEY,
    name          text        NOT NULL,
    owner_user_id uuid        NOT NULL,
    version       integer     NOT NULL,
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL
);

CREATE TABLE api_keys (
    api_key      text PRIMARY KEY,
    tenant_id    uuid        NOT NULL REFERENCES tenants (id),
    secret_hash  text        NOT NULL,
    created_at   timestamptz NOT NULL,
    revoked_at   timestamptz
);
CREATE INDEX api_keys_tenant ON api_keys (tenant_id);

CREATE TABLE users (
    id         uuid PRIMARY KEY,
    tenant_id  uuid        NOT NULL,
    email      text        NOT NULL,
    name       text        NOT NULL,
    role       text        NOT NULL,
    status     text        NOT NULL,
    version    integer     NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    UNIQUE (tenant_id, email)
);
