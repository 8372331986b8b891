-- A signing key is published before it signs and carries the bounds of
-- what it signs (eventstore/keys.go):
--   signs_from: no instance signs with it before then, so that every
--     instance has loaded it by the time a token it signed arrives;
--   tenant_token_ttl, user_token_ttl: the longest lifetime of a token of
--     each kind it signs, on any instance; every instance verifies against
--     these, never against its own settings. Keys made before this
--     migration get the lifetimes of the first instance that starts after
--     it (eventstore.EnsureKey), as SQL cannot know them.
ALTER TABLE signing_keys
    ADD COLUMN signs_from       timestamptz,
    ADD COLUMN tenant_token_ttl interval CHECK (tenant_token_ttl > interval '0'),
    ADD COLUMN user_token_ttl   interval CHECK (user_token_ttl > interval '0');
UPDATE signing_keys SET signs_from = created_at;
ALTER TABLE signing_keys ALTER COLUMN signs_from SET NOT NULL;
