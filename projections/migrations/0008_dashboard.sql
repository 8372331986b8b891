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

-- Failed sign-ins, for the lock-out: not events (an attacker could fill the
-- log with them), and not rebuilt. Rows older than the lock-out window are
-- deleted when the address signs in.
CREATE TABLE dashboard_sign_in_failures (
    email     text        NOT NULL,
    failed_at timestamptz NOT NULL
);
CREATE INDEX dashboard_sign_in_failures_email ON dashboard_sign_in_failures (email, failed_at);

-- When an API key last obtained a token (POST /token): operational data
-- shown on the dashboard's API keys page, not an event.
CREATE TABLE api_key_uses (
    api_key      text PRIMARY KEY,
    last_used_at timestamptz NOT NULL
);
