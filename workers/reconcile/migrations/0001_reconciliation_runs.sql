-- The scheduled reconciliations (LEDGER_RECONCILE_AT): one row per rail
-- and window, claimed by the one ledgerd that runs it, so that several
-- processes run each window once. Operational records, not events: the
-- breaks a run finds are events.
CREATE TABLE reconciliation_runs (
    rail        text        NOT NULL,
    window_from timestamptz NOT NULL,
    window_to   timestamptz NOT NULL,
    started_at  timestamptz NOT NULL,
    finished_at timestamptz,          -- NULL while it runs, or after a crash (claimed again once stale)
    report      jsonb,
    PRIMARY KEY (rail, window_from)
);
