-- Operational rows of the partner dashboard (issue 8): facts about use, not
-- events, so not read models either (a rebuild could not reproduce them).

-- Failed dashboard sign-ins, for the lock-out. Not events: an attacker
-- could fill the event log with them. A success deletes its address's rows.
CREATE TABLE dashboard_sign_in_failures (
    email     text        NOT NULL,
    failed_at timestamptz NOT NULL
);
CREATE INDEX dashboard_sign_in_failures_email ON dashboard_sign_in_failures (email, failed_at);

-- When an API key last obtained a token (POST /token), shown on the
-- dashboard's API keys page.
CREATE TABLE api_key_uses (
    api_key      text PRIMARY KEY,
    last_used_at timestamptz NOT NULL
);
