-- Payments (spec §2.9, contract §6): one row per payment, written inline
-- from its events. state is the domain.Payment after the row's version, as
-- JSON: the API renders it without folding events. The columns beside it
-- are what lists filter and page on.
CREATE TABLE payments (
    id          uuid PRIMARY KEY,
    tenant_id   uuid        NOT NULL,
    user_id     uuid        NOT NULL,
    merchant_id uuid        NOT NULL,
    status      text        NOT NULL,
    state       jsonb       NOT NULL,
    version     integer     NOT NULL,
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL
);
-- GET /payments pages newest first by (created_at, id): for the tenant, for
-- one user, and filtered by status or merchant.
CREATE INDEX payments_tenant_created ON payments (tenant_id, created_at DESC, id DESC);
CREATE INDEX payments_user_created ON payments (tenant_id, user_id, created_at DESC, id DESC);
CREATE INDEX payments_status_created ON payments (tenant_id, status, created_at DESC, id DESC);
CREATE INDEX payments_merchant_created ON payments (tenant_id, merchant_id, created_at DESC, id DESC);

-- Supporting documents of payments, projected from payment.document_attached.
CREATE TABLE payment_documents (
    id           uuid PRIMARY KEY REFERENCES documents (id),
    tenant_id    uuid        NOT NULL,
    payment_id   uuid        NOT NULL REFERENCES payments (id),
    file_name    text        NOT NULL,
    content_type text        NOT NULL,
    size         bigint      NOT NULL,
    sha256       text        NOT NULL,
    created_at   timestamptz NOT NULL
);
CREATE INDEX payment_documents_list ON payment_documents (payment_id, created_at DESC, id DESC);
