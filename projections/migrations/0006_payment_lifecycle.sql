-- The payment lifecycle's durable work lists, written inline with the
-- payment events that create and settle them, so a crash can lose none.

-- Expiry timer: a created payment's deadline, removed once it leaves
-- created. Every instance polls for due rows; the domain decides each
-- expiry once (optimistic concurrency on the payment's stream).
CREATE TABLE payment_deadlines (
    payment_id uuid PRIMARY KEY,
    tenant_id  uuid        NOT NULL,
    expires_at timestamptz NOT NULL
);
CREATE INDEX payment_deadlines_due ON payment_deadlines (expires_at);

-- Webhook deliveries (contract §8): one row per status event of a payment
-- with a webhookUrl, holding the payment as of that event. A row is
-- pending until a 2xx (delivered) or the last retry (exhausted); a
-- dispatcher leases due rows, oldest status first per payment.
CREATE TABLE webhook_deliveries (
    event_id        uuid PRIMARY KEY,
    tenant_id       uuid        NOT NULL,
    payment_id      uuid        NOT NULL,
    stream_version  integer     NOT NULL,
    type            text        NOT NULL, -- payment.<status>
    occurred_at     timestamptz NOT NULL,
    payment         jsonb       NOT NULL, -- the payments row's state after the event
    status          text        NOT NULL DEFAULT 'pending',
    attempts        integer     NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL,
    lease_until     timestamptz
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_payment ON webhook_deliveries (payment_id, stream_version) WHERE status = 'pending';

-- Every delivery attempt (GET /payments/{id}/webhooks), projected from
-- payment.webhook_attempted.
CREATE TABLE webhook_attempts (
    event_id    uuid        NOT NULL,
    attempt     integer     NOT NULL,
    tenant_id   uuid        NOT NULL,
    payment_id  uuid        NOT NULL,
    type        text        NOT NULL,
    at          timestamptz NOT NULL,
    status_code integer,
    duration_ms integer     NOT NULL,
    error       text,
    PRIMARY KEY (event_id, attempt)
);
CREATE INDEX webhook_attempts_payment ON webhook_attempts (payment_id, at);
