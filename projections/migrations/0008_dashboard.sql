-- Partner dashboard (issue 8). dashboard_users and dashboard_sessions are
-- read models of the dashboard_user stream, written inline like the others.
-- Secrets are hashes: argon2id for passwords, SHA-256 for random tokens.
CREATE TABLE dashboard_users (
    id               uuid PRIMARY KEY,
    tenant_id        uuid        NOT NULL,
    email            text        NOT NULL UNIQUE, -- one sign-in address names one account
    password_hash    text        NOT NULL DEFAULT '',
    setup_token_hash text        UNIQUE,
    setup_expires_at timestamptz,
    version          integer     NOT NULL,
    created_at       timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL
);

CREATE TABLE dashboard_sessions (
    session_hash text PRIMARY KEY,
    user_id      uuid        NOT NULL,
    tenant_id    uuid        NOT NULL,
    created_at   timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    revoked_at   timestamptz
);
