// Package rebuild rebuilds read models (STYLE §5): the events are
// replayed from the start into shadow tables, which then replace the live
// ones in one short transaction while ledgerd keeps serving. The read
// models themselves (their tables, migrations and the projection) are
// package projections; this package imports it and it
// knows nothing of the rebuild.
//
//  1. Shadow tables. A schema rebuild_<random> gets a copy of each table of
//     the group: CREATE TABLE ... (LIKE public.t INCLUDING ALL EXCLUDING
//     INDEXES), plus its primary-key and unique constraints under their
//     original names (the projection's UPDATEs and ON CONFLICTs need them),
//     added after the bulk replay's COPYs (one sorted build instead of
//     row-by-row inserts in stream order).
//  2. Bulk replay. Every event of one REPEATABLE READ snapshot is read in
//     stream order, and each stream is projected whole by
//     projections.ProjectStream, the function the append projects with (the
//     domain's own fold; fold.go): its rows are held in memory and COPYed
//     once the stream ends. Each stream is replayed in version order, which
//     is all the projection needs. The apply connections' search_path is
//     the shadow schema alone: the projection's unqualified table names hit
//     the shadow tables, never a live one.
//  3. Finishing. The other indexes are built and the foreign keys added,
//     with their original names, and the tables analysed.
//  4. Catch-up. Events committed meanwhile are replayed in further
//     snapshots, each stream's new events projected as the append does, from
//     the state its earlier events fold to (applier.go). Which events: not
//     "seq > the last seq seen", because seq is taken at INSERT and commits come out of seq
//     order (STYLE §4). A round remembers the highest position P its
//     snapshot saw and the seqs (as ranges) of the events it saw
//     unsequenced; the next round replays the events positioned after P or
//     unsequenced, except those seqs. Positions are assigned after commit,
//     in commit order, so every event of an earlier snapshot is either at or
//     below P or among those seqs.
//  5. Swap. One transaction takes LOCK TABLE public.<t> IN ACCESS EXCLUSIVE
//     MODE on the group's tables, replays the last events in a snapshot
//     taken after the lock, moves the live tables into a schema
//     rebuild_<random>_old and the shadow ones into public, and commits.
//     Holding the locks is what makes the tail complete: every event of the
//     group writes at least one of the group's tables in its own append
//     transaction, so once the locks are held each such transaction has
//     either committed (and the snapshot sees it) or waits on the lock and
//     will write into the new tables once the swap commits (Postgres
//     re-resolves the names of a statement whose table changed while it
//     waited, prepared ones included). Readers and writers of the group's
//     tables wait for the swap's few milliseconds. The lock is tried with a
//     lock_timeout and statement_timeout below deadlock_timeout, so in any
//     deadlock with an appender it is the rebuild that gives up (and tries
//     again after another catch-up round), never the appender.
//     The retired tables are dropped afterwards in a transaction of their
//     own: dropping a table whose foreign key points at another takes an
//     ACCESS EXCLUSIVE lock on that one too (documents), which the swap
//     avoids.
//
// Verify (ledgerctl audit verify) is steps 1 to 4 without the swap: one
// REPEATABLE READ transaction replays the last events into the shadow
// tables and, in the same snapshot, compares each with its live table in
// SQL (the rows' to_jsonb text, EXCEPT ALL both ways, paired by primary
// key), then rolls back; the shadow schema is dropped. It takes the
// rebuild's lock, so a rebuild and a verify never run at once.
//
// The bulk round's snapshot stays open while it runs (how long for a
// history of a given length: docs/performance.md, Replay), holding back
// vacuum's horizon meanwhile. Memory is one page of events, one stream's
// rows per fold worker and a few COPY chunks: flat in the number of events
// (a single stream's events are held whole).
//
// Foreign keys: LIKE copies none. Those between tables of the group
// (kyc_documents and momo_accounts -> users, api_keys -> tenants,
// payment_documents -> payments) are re-created between the shadow tables;
// those leaving the group (payment_documents -> documents, the document
// store, which is never rebuilt) point at the live table, added NOT VALID
// (waiting for its lock 200 ms at a time, so uploads never queue behind
// it) and validated in a transaction of its own, so uploads are not
// blocked for the scan (finishShadow). A foreign key from a table
// outside the group into it makes the rebuild refuse: that table belongs
// in the group. Storage parameters (fillfactor, autovacuum settings, the
// TOAST table's too) and columns' statistics targets, which LIKE leaves
// out, are copied too; autovacuum is off on the shadow tables until the
// swap, which gives them the live tables' setting back (createShadow).
// Privileges, triggers and row security are not copied: tables with
// triggers or row security are refused; GRANTs on the read models are not
// used here (ledgerd connects as their owner) and would have to be granted
// again.
//
// Work lists: payment_deadlines is derived from events like any read
// model. webhook_deliveries is not rebuilt: the projection adds a delivery
// with each status event, but the dispatchers move it on outside the
// events, and a rebuild leaves it alone.
package rebuild
