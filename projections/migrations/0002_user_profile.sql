-- The users read model grows to the whole User and Profile (spec 2.1, 2.6),
-- and momo accounts get a table of their own.
ALTER TABLE users
    ADD COLUMN record_id               uuid,
    ADD COLUMN is_verified             boolean NOT NULL DEFAULT false,
    ADD COLUMN details                 jsonb   NOT NULL DEFAULT '{}',
    ADD COLUMN company_name            text    NOT NULL DEFAULT '',
    ADD COLUMN phone_number            text    NOT NULL DEFAULT '',
    ADD COLUMN default_momo_account_id uuid;

-- The list item's id (spec 2.2) is the id of the user's first event.
UPDATE users u SET record_id = e.id FROM events e WHERE e.stream_id = u.id AND e.stream_version = 1;
ALTER TABLE users ALTER COLUMN record_id SET NOT NULL;

-- GET /users pages newest first by (created_at, id): a keyset that neither
-- repeats nor skips rows while others write.
CREATE INDEX users_list ON users (tenant_id, status, created_at DESC, id DESC);

CREATE TABLE momo_accounts (
    id             uuid PRIMARY KEY,
    tenant_id      uuid        NOT NULL,
    user_id        uuid        NOT NULL REFERENCES users (id),
    label          text        NOT NULL,
    phone_number   text        NOT NULL,
    mobile_network text        NOT NULL,
    country_code   text        NOT NULL,
    added_version  integer     NOT NULL,
    UNIQUE (user_id, phone_number)
);
CREATE INDEX momo_accounts_user ON momo_accounts (user_id, added_version);
