-- No statistics on the posting lines' arrays: no query filters on them
-- (the trial balance selects by tenant and time, the audit by event id),
-- and ANALYZE's element statistics of four arrays took 360 ms of a
-- 1M-event rebuild's ANALYZE of ledger_entries, against 116-140 ms
-- without. A rebuild carries the targets over to its shadow table.
ALTER TABLE ledger_entries
    ALTER COLUMN accounts SET STATISTICS 0,
    ALTER COLUMN currencies SET STATISTICS 0,
    ALTER COLUMN sides SET STATISTICS 0,
    ALTER COLUMN amounts SET STATISTICS 0;
