-- reconciliation_breaks: one row per reconciliation break (stream type
-- reconciliation, in the operator's books), its state as the domain folds
-- it (domain/reconciliation.go).
CREATE TABLE reconciliation_breaks (
    id         uuid PRIMARY KEY,
    rail       text        NOT NULL,
    kind       text        NOT NULL,
    status     text        NOT NULL,
    state      json        NOT NULL,
    version    integer     NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
);
-- The operator's list (ledgerctl reconcile breaks, the dashboard) and the
-- metrics: open breaks per rail, the oldest first.
CREATE INDEX reconciliation_breaks_status ON reconciliation_breaks (status, created_at, id);
