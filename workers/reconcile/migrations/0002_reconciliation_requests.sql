-- Reconciliations an operator asked for (ledgerctl reconcile), queued for
-- a ledgerd to run: ledgerd holds the providers' clients and serves their
-- callbacks. One process claims each; the asker waits for its report.
CREATE TABLE reconciliation_requests (
    id           uuid PRIMARY KEY,
    rail         text        NOT NULL,
    window_from  timestamptz NOT NULL,
    window_to    timestamptz NOT NULL,
    actor        text        NOT NULL, -- who asked: the breaks it finds are recorded by them
    requested_at timestamptz NOT NULL DEFAULT now(),
    claimed_at   timestamptz,          -- a ledgerd took it (taken again once stale, its process gone)
    finished_at  timestamptz,
    report       jsonb,
    error        text NOT NULL DEFAULT ''
);
CREATE INDEX reconciliation_requests_waiting ON reconciliation_requests (requested_at) WHERE finished_at IS NULL;
