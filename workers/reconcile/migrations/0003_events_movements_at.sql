-- The ledger's side of a reconciliation reads the money events of a window
-- by the time each event says it happened (data.at, RFC 3339 in UTC as the
-- store normalises it), never by scanning the whole history. A cast of
-- text to timestamptz is only stable in general (DateStyle, TimeZone);
-- with an explicit offset, as every stored `at` has, it is immutable, so
-- event_at may be indexed. The types are ledgerMovementTypes
-- (workers/reconcile/ledger_records.go; a test keeps the two equal).
CREATE FUNCTION event_at(data json) RETURNS timestamptz
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT (data->>'at')::timestamptz $$;

CREATE INDEX events_movements_at ON events (event_at(data))
    WHERE type IN ('payment.deposit_received', 'payment.deposited', 'payment.transferring', 'payment.change_refund_sent',
        'unmatched_funds.received', 'unmatched_funds.assigned', 'unmatched_funds.return_sent');
