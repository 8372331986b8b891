-- Signing and sealing keys are stored wrapped under a master key that
-- never enters the database (eventstore/keys_master.go): wrapped_* holds
-- the 12-byte nonce, then the AES-256-GCM ciphertext and tag, and kek_id
-- names the master key. SQL cannot know the master key, so the keys
-- stored in clear before this migration are wrapped by ledgerd at its next
-- start (eventstore.WrapStoredKeys), which empties their clear column.
--
-- The clear columns are renamed, not just emptied: a process of an earlier
-- version still running would read an emptied secret as an empty HMAC key
-- and accept tokens anyone can sign; it fails to read the keys instead.
ALTER TABLE signing_keys RENAME COLUMN secret TO clear_secret;
ALTER TABLE signing_keys
    ALTER COLUMN clear_secret DROP NOT NULL,
    ADD COLUMN wrapped_secret bytea,
    ADD COLUMN kek_id text,
    ADD CONSTRAINT signing_keys_clear_or_wrapped
        CHECK ((clear_secret IS NULL) <> (wrapped_secret IS NULL) AND (wrapped_secret IS NULL) = (kek_id IS NULL));
ALTER TABLE sealing_keys RENAME COLUMN key TO clear_key;
ALTER TABLE sealing_keys
    ALTER COLUMN clear_key DROP NOT NULL,
    ADD COLUMN wrapped_key bytea,
    ADD COLUMN kek_id text,
    ADD CONSTRAINT sealing_keys_clear_or_wrapped
        CHECK ((clear_key IS NULL) <> (wrapped_key IS NULL) AND (wrapped_key IS NULL) = (kek_id IS NULL));
