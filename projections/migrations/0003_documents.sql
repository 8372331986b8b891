-- Document bytes (KYC documents now, payment documents later) live in
-- Postgres, so every ledgerd instance serves them and they survive restarts.
-- A document's bytes are written, in their own transaction, before the event
-- that records it (user.kyc_document_uploaded); a crash in between leaves a
-- documents row no event names. Such an orphan is harmless: its fresh id was
-- never returned, no read model lists it, and GET /documents/{id} serves only
-- documents a read model names (kyc_documents). An upload whose event is
-- refused (validation, 404) deletes its bytes at once; one that fails for an
-- unknown reason leaves them, as an orphan, rather than risk deleting the
-- bytes of an event that did commit.
CREATE TABLE documents (
    id           uuid PRIMARY KEY,
    tenant_id    uuid        NOT NULL,
    owner        uuid        NOT NULL, -- the user (later: the payment) it belongs to
    content_type text        NOT NULL,
    size         bigint      NOT NULL,
    sha256       text        NOT NULL, -- lowercase hex
    file_name    text        NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now()
);

-- The bytes, in chunks of at most 1 MiB (n = 0, 1, ...), so uploads and
-- downloads stream without one 10 MiB value in memory.
CREATE TABLE document_chunks (
    document_id uuid    NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
    n           integer NOT NULL,
    bytes       bytea   NOT NULL,
    PRIMARY KEY (document_id, n)
);

-- The KYC documents read model, projected from user.kyc_document_uploaded.
CREATE TABLE kyc_documents (
    id            uuid PRIMARY KEY,
    tenant_id     uuid        NOT NULL,
    user_id       uuid        NOT NULL REFERENCES users (id),
    document_type text        NOT NULL,
    file_name     text        NOT NULL,
    content_type  text        NOT NULL,
    size          bigint      NOT NULL,
    sha256        text        NOT NULL,
    created_at    timestamptz NOT NULL
);
-- GET /users/{userId}/kyc-documents pages newest first by (created_at, id).
CREATE INDEX kyc_documents_list ON kyc_documents (user_id, created_at DESC, id DESC);
