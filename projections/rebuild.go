package projections

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/domain/rawjson"
	"github.com/ledger/ledger/eventstore/pguuid"
)

// Rebuilding read models (STYLE §5): the events are replayed from the
// start into shadow tables, which then replace the live ones in one short
// transaction while ledgerd keeps serving.
//
//  1. Shadow tables. A schema rebuild_<random> gets a copy of each table of
//     the group: CREATE TABLE ... (LIKE public.t INCLUDING ALL EXCLUDING
//     INDEXES), plus its primary-key and unique constraints under their
//     original names (the projection's UPDATEs and ON CONFLICTs need them).
//  2. Bulk replay. Every event of one REPEATABLE READ snapshot is replayed,
//     by default through the fold (see "The fold" below): events in stream
//     order, each stream folded in memory exactly as the projector's
//     statements would leave its rows, each row written once with COPY.
//     With ViaProjector, through Projector.Project itself: sequenced events
//     in position order, then those the sequencer has not reached yet in
//     insert (seq) order, their statements in large pipelined batches on
//     several connections (a stream per connection, by a hash of its id).
//     Either way each stream is replayed in version order, which is all the
//     projections need. The apply connections' search_path is the shadow
//     schema alone: the projection's unqualified table names hit the shadow
//     tables, and a statement for a table outside the group (filtered out
//     beforehand) could only fail, never touch a live table.
//  3. Finishing. The other indexes are built and the foreign keys added,
//     with their original names, and the tables analysed.
//  4. Catch-up. Events committed meanwhile are replayed through the
//     projector in further snapshots. Which ones: not "seq > the last seq
//     seen", because seq is taken at INSERT and commits come out of seq
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
// The bulk round's snapshot stays open while it runs (some 30 s for a
// million events), holding back vacuum's horizon meanwhile. Memory is one
// page of events, one stream's rows per fold worker and a few COPY chunks:
// flat in the number of events (a single stream's events are held whole).
//
// Foreign keys: LIKE copies none. Those between tables of the group
// (kyc_documents and momo_accounts -> users, api_keys -> tenants,
// payment_documents -> payments) are re-created between the shadow tables;
// those leaving the group (payment_documents -> documents, the document
// store, which is never rebuilt) point at the live table, checked in
// NOT VALID + VALIDATE steps so uploads are not blocked for the scan. A
// foreign key from a table outside the group into it makes the rebuild
// refuse: that table belongs in the group. Privileges, triggers and row
// security are not copied: tables with triggers or row security are
// refused; GRANTs on the read models are not used here (ledgerd connects
// as their owner) and would have to be granted again.
//
// Work queues: payment_deadlines and webhook_deliveries are derived from
// events like any read model. A delivery's state (pending, exhausted, its
// attempts and next attempt, or gone once delivered) is moved on by the
// payment.webhook_attempted events the dispatcher appends, so a rebuild
// leaves out what was delivered and sends nothing again. The one thing no event
// records, a dispatcher's lease (lease_until) on a delivery in flight, is
// carried over from the live table in the swap transaction, so no other
// dispatcher sends it again because of the rebuild.

// Group is a set of read-model tables that are rebuilt together: the
// tables one projection file writes.
type Group struct {
	Name   string
	Tables []string
}

// Groups are the read models a rebuild knows, by the projection file that
// writes them. documents and document_chunks are the document store, not
// a projection, and are never rebuilt.
var Groups = []Group{
	{Name: "tenants", Tables: []string{"tenants", "api_keys"}},
	{Name: "users", Tables: []string{"users", "momo_accounts", "kyc_documents"}},
	{Name: "merchants", Tables: []string{"merchants"}},
	{Name: "payments", Tables: []string{"payments", "payment_documents", "payment_deadlines", "webhook_deliveries", "webhook_attempts"}},
	{Name: "postings", Tables: []string{"ledger_postings"}},
	{Name: "dashboard", Tables: []string{"dashboard_users", "dashboard_sessions"}},
}

// GroupNames lists the names Rebuild takes, "all" first.
func GroupNames() []string {
	names := []string{"all"}
	for _, g := range Groups {
		names = append(names, g.Name)
	}
	return names
}

// Stats is what a rebuild did.
type Stats struct {
	Groups       []string         `json:"groups"`
	Tables       map[string]int64 `json:"tables"`       // rows per table right after the swap
	Events       int64            `json:"events"`       // events replayed, all rounds
	Statements   int64            `json:"statements"`   // projection statements run on the shadow tables
	Rows         int64            `json:"rows"`         // rows the fold wrote with COPY
	ViaProjector bool             `json:"viaProjector"` // the bulk round used the projector, not the fold
	Handed       int64            `json:"handed"`       // streams the fold handed to the projector
	CatchUp      int64            `json:"catchUp"`      // events replayed after the bulk round
	Locked       int64            `json:"locked"`       // events replayed while holding the locks
	Rounds       int              `json:"rounds"`       // replay rounds, the locked one included
	SwapAttempts int              `json:"swapAttempts"` // lock attempts, the successful one included
	Replay       time.Duration    `json:"replayNs"`     // the bulk round
	Finish       time.Duration    `json:"finishNs"`     // indexes, foreign keys, logging, analyze
	LockHeld     time.Duration    `json:"lockHeldNs"`   // from the lock to the commit of the swap
	Total        time.Duration    `json:"totalNs"`
}

// EventsPerSecond is the whole rebuild's rate: events replayed over the
// total time, shadow setup, finishing and swap included.
func (s Stats) EventsPerSecond() float64 {
	if s.Total <= 0 {
		return 0
	}
	return float64(s.Events) / s.Total.Seconds()
}

// Progress is what Rebuild reports while it runs.
type Progress struct {
	Phase   string // "replay", "finish", "catch-up", "swap", "done"
	Events  int64  // events replayed so far
	Elapsed time.Duration
}

// RebuildOptions tune a rebuild; the zero value is the default.
type RebuildOptions struct {
	Progress    func(Progress) // called now and then, from one goroutine at a time; nil: never
	Connections int            // apply (and COPY) connections for the bulk round; 0: 2
	BatchEvents int            // events per pipelined batch of projector statements; 0: 1000

	// ViaProjector replays the bulk round through the projector's
	// statements too, as the catch-up rounds do, instead of the fold and
	// COPY: some ten times slower, and the reference the fold is tested
	// against.
	ViaProjector bool
}

// Rebuild rebuilds the read models of group ("all" or "" for every group)
// from the first event and swaps them in; see the comment above.
func Rebuild(ctx context.Context, pool *pgxpool.Pool, group string, progress func(Progress)) (Stats, error) {
	return RebuildWith(ctx, pool, group, RebuildOptions{Progress: progress})
}

// rebuildLockKey is the advisory lock one rebuild at a time holds.
const rebuildLockKey = 0x6c65646765720006

// RebuildWith is Rebuild with options.
func RebuildWith(ctx context.Context, pool *pgxpool.Pool, group string, opt RebuildOptions) (stats Stats, err error) {
	groups, err := pickGroups(group)
	if err != nil {
		return stats, err
	}
	if opt.Connections <= 0 {
		opt.Connections = 2
	}
	if opt.BatchEvents <= 0 {
		opt.BatchEvents = 1000
	}
	r := &rebuilder{pool: pool, opt: opt, start: time.Now(), keep: map[string]bool{}}
	for _, g := range groups {
		r.stats.Groups = append(r.stats.Groups, g.Name)
		for _, t := range g.Tables {
			r.tables = append(r.tables, t)
			r.keep[t] = true
		}
	}
	for _, t := range r.tables {
		if _, ok := foldColumns[t]; !ok {
			r.opt.ViaProjector = true // a read model the fold does not know yet
		}
	}
	opt = r.opt
	r.stats.ViaProjector = opt.ViaProjector
	suffix := make([]byte, 6)
	rand.Read(suffix)
	r.shadow = "rebuild_" + hex.EncodeToString(suffix)
	r.retired = r.shadow + "_old"

	// One rebuild at a time: its lock also makes the leftovers of a crashed
	// one safe to drop.
	lockConn, err := pool.Acquire(ctx)
	if err != nil {
		return stats, fmt.Errorf("rebuild: %w", err)
	}
	defer lockConn.Release()
	var locked bool
	if err := lockConn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, int64(rebuildLockKey)).Scan(&locked); err != nil {
		return stats, fmt.Errorf("rebuild: lock: %w", err)
	}
	if !locked {
		return stats, errors.New("rebuild: another rebuild is running")
	}
	defer lockConn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, int64(rebuildLockKey))
	if err := r.dropLeftovers(ctx); err != nil {
		return stats, err
	}

	if err := r.connect(ctx); err != nil {
		return stats, err
	}
	defer r.close()
	defer func() {
		if err != nil {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			err = errors.Join(err, r.dropSchema(cctx, r.shadow))
		}
	}()
	if err := r.createShadow(ctx); err != nil {
		return stats, err
	}

	t := time.Now()
	r.report("replay")
	var cur cursor
	if opt.ViaProjector {
		cur, err = r.bulkRound(ctx, cursor{})
	} else {
		cur, err = r.foldRound(ctx)
	}
	if err != nil {
		return stats, err
	}
	r.stats.Replay = time.Since(t)
	t = time.Now()
	r.report("finish")
	if err := r.finishShadow(ctx); err != nil {
		return stats, err
	}
	r.stats.Finish = time.Since(t)

	if err := r.swap(ctx, cur); err != nil {
		return stats, err
	}
	r.stats.Total = time.Since(r.start)
	r.report("done")
	return r.stats, r.afterSwap(ctx)
}

func pickGroups(name string) ([]Group, error) {
	if name == "" || name == "all" {
		return Groups, nil
	}
	for _, g := range Groups {
		if g.Name == name {
			return []Group{g}, nil
		}
	}
	return nil, fmt.Errorf("rebuild: unknown read model %q (one of %s)", name, strings.Join(GroupNames(), ", "))
}

// rebuilder is one rebuild's state.
type rebuilder struct {
	pool    *pgxpool.Pool
	opt     RebuildOptions
	tables  []string        // the group's tables, in group order
	keep    map[string]bool // the same, as a set
	defs    []tableDef      // the live tables' keys, indexes and foreign keys
	shadow  string          // schema of the shadow tables
	retired string          // schema the live tables move to at the swap
	conns   []*pgx.Conn     // search_path = shadow; conns[0] also swaps
	lz4     bool            // the server compresses TOAST with lz4
	start   time.Time

	stats    Stats
	events   atomic.Int64
	stmts    atomic.Int64
	rows     atomic.Int64
	reportMu sync.Mutex
	lastRep  time.Time
}

func (r *rebuilder) report(phase string) {
	if r.opt.Progress == nil {
		return
	}
	r.reportMu.Lock()
	defer r.reportMu.Unlock()
	r.lastRep = time.Now()
	r.opt.Progress(Progress{Phase: phase, Events: r.events.Load(), Elapsed: time.Since(r.start)})
}

// reportSometimes reports at most once a second.
func (r *rebuilder) reportSometimes(phase string) {
	if r.opt.Progress == nil {
		return
	}
	r.reportMu.Lock()
	due := time.Since(r.lastRep) >= time.Second
	r.reportMu.Unlock()
	if due {
		r.report(phase)
	}
}

func ident(s string) string { return pgx.Identifier{s}.Sanitize() }

// qualified is schema.table, quoted.
func qualified(schema, table string) string { return pgx.Identifier{schema, table}.Sanitize() }

// connect opens the apply connections: their own, never the pool's,
// because their search_path (the shadow schema alone) and their cached
// statements (prepared against the shadow tables) must never serve anyone
// else. synchronous_commit is off for the bulk work; the swap turns it on.
//
// The large jsonb values (a payment's state, and its copy in each pending
// webhook delivery) are compressed with lz4 where the server has it: some 15% less
// of the COPYs' CPU than pglz, and transparent to readers, since Postgres
// records the method with each value.
func (r *rebuilder) connect(ctx context.Context) error {
	err := r.pool.QueryRow(ctx, `SELECT coalesce(bool_or('lz4' = ANY(enumvals)), false) FROM pg_settings
		WHERE name = 'default_toast_compression'`).Scan(&r.lz4)
	if err != nil {
		return fmt.Errorf("rebuild: settings: %w", err)
	}
	for range r.opt.Connections {
		cfg := r.pool.Config().ConnConfig.Copy()
		cfg.RuntimeParams["search_path"] = ident(r.shadow)
		cfg.RuntimeParams["synchronous_commit"] = "off"
		cfg.RuntimeParams["maintenance_work_mem"] = "256MB" // index builds sort in memory
		if r.lz4 {
			cfg.RuntimeParams["default_toast_compression"] = "lz4"
		}
		conn, err := pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			return fmt.Errorf("rebuild: connect: %w", err)
		}
		pguuid.Register(conn.TypeMap()) // every COPY row carries ids
		r.conns = append(r.conns, conn)
	}
	return nil
}

func (r *rebuilder) close() {
	for _, c := range r.conns {
		c.Close(context.Background())
	}
}

// dropLeftovers drops the schemas of rebuilds that died before cleaning up
// (the caller holds the rebuild lock, so none of them is running).
func (r *rebuilder) dropLeftovers(ctx context.Context) error {
	rows, err := r.pool.Query(ctx, `SELECT nspname FROM pg_namespace WHERE nspname ~ '^rebuild_[0-9a-f]{12}(_old)?$'`)
	if err != nil {
		return fmt.Errorf("rebuild: find leftovers: %w", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("rebuild: find leftovers: %w", err)
	}
	for _, n := range names {
		if err := r.dropSchema(ctx, n); err != nil {
			return err
		}
	}
	return nil
}

// dropSchema drops a rebuild schema and what is in it. A retired table
// with a foreign key to documents needs a brief ACCESS EXCLUSIVE lock on
// documents to go, so the drop waits for it at most a moment at a time.
func (r *rebuilder) dropSchema(ctx context.Context, schema string) error {
	var err error
	for attempt := range 50 {
		err = pgx.BeginFunc(ctx, r.pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SET LOCAL lock_timeout = '200ms'`); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `DROP SCHEMA IF EXISTS `+ident(schema)+` CASCADE`)
			return err
		})
		if !isLockTimeout(err) {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(attempt+1) * 20 * time.Millisecond):
		}
	}
	if err != nil {
		return fmt.Errorf("rebuild: drop schema %s: %w", schema, err)
	}
	return nil
}

// tableDef is what a live table needs re-created on its shadow: the
// constraints and indexes LIKE ... EXCLUDING INDEXES leaves out.
type tableDef struct {
	name    string
	keys    [][2]string // primary key, unique and exclusion constraints: name, definition
	indexes [][2]string // other indexes: name, CREATE INDEX on the shadow table
	fks     [][2]string // foreign keys: name, definition (REFERENCES the shadow table within the group)
}

// createShadow creates the shadow schema and tables, with their keys.
func (r *rebuilder) createShadow(ctx context.Context) error {
	defs, err := r.describe(ctx)
	if err != nil {
		return err
	}
	r.defs = defs
	c := r.conns[0]
	if _, err := c.Exec(ctx, `CREATE SCHEMA `+ident(r.shadow)); err != nil {
		return fmt.Errorf("rebuild: create schema: %w", err)
	}
	persistence := "" // the fold writes each row once: logging it then costs less than a rewrite later
	if r.opt.ViaProjector {
		persistence = "UNLOGGED " // the projector rewrites rows many times; SET LOGGED writes them once
	}
	for _, d := range defs {
		if _, err := c.Exec(ctx, `CREATE `+persistence+`TABLE `+qualified(r.shadow, d.name)+
			` (LIKE `+qualified("public", d.name)+` INCLUDING ALL EXCLUDING INDEXES)`); err != nil {
			return fmt.Errorf("rebuild: create shadow %s: %w", d.name, err)
		}
		for _, k := range d.keys {
			if _, err := c.Exec(ctx, `ALTER TABLE `+qualified(r.shadow, d.name)+` ADD CONSTRAINT `+ident(k[0])+` `+k[1]); err != nil {
				return fmt.Errorf("rebuild: shadow %s: %s: %w", d.name, k[0], err)
			}
		}
	}
	return nil
}

// describe reads the live tables' definitions and refuses what a rebuild
// cannot carry over.
func (r *rebuilder) describe(ctx context.Context) ([]tableDef, error) {
	tx, err := r.pool.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, fmt.Errorf("rebuild: describe: %w", err)
	}
	defer tx.Rollback(ctx)
	// With an empty search_path every name in the definitions below comes
	// out schema-qualified, so they can be pointed at the shadow schema.
	if _, err := tx.Exec(ctx, `SET LOCAL search_path = ''`); err != nil {
		return nil, fmt.Errorf("rebuild: describe: %w", err)
	}
	var problems []string
	rows, err := tx.Query(ctx, `SELECT t.name, c.oid IS NOT NULL,
			coalesce(c.relkind::text, ''), coalesce(c.relrowsecurity, false),
			coalesce((SELECT count(*) FROM pg_trigger g WHERE g.tgrelid = c.oid AND NOT g.tgisinternal), 0),
			coalesce((SELECT count(*) FROM pg_attrdef d WHERE d.adrelid = c.oid AND pg_get_expr(d.adbin, d.adrelid) LIKE 'nextval(%'), 0)
		FROM unnest($1::text[]) AS t(name)
		LEFT JOIN pg_class c ON c.relname = t.name AND c.relnamespace = 'public'::regnamespace`, r.tables)
	if err != nil {
		return nil, fmt.Errorf("rebuild: describe: %w", err)
	}
	var name, kind string
	var exists, rls bool
	var triggers, serials int
	_, err = pgx.ForEachRow(rows, []any{&name, &exists, &kind, &rls, &triggers, &serials}, func() error {
		switch {
		case !exists:
			problems = append(problems, fmt.Sprintf("table public.%s does not exist (migrations not applied?)", name))
		case kind != "r":
			problems = append(problems, fmt.Sprintf("public.%s is not a plain table", name))
		case rls:
			problems = append(problems, fmt.Sprintf("public.%s has row security, which a rebuild does not copy", name))
		case triggers > 0:
			problems = append(problems, fmt.Sprintf("public.%s has triggers, which a rebuild does not copy", name))
		case serials > 0:
			problems = append(problems, fmt.Sprintf("public.%s has a sequence default, which a rebuild cannot carry over", name))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("rebuild: describe: %w", err)
	}
	rows, err = tx.Query(ctx, `SELECT src.relname, con.conname, dst.relname FROM pg_constraint con
		JOIN pg_class src ON src.oid = con.conrelid JOIN pg_class dst ON dst.oid = con.confrelid
		WHERE con.contype = 'f' AND dst.relnamespace = 'public'::regnamespace AND dst.relname = ANY($1)
			AND NOT (src.relnamespace = 'public'::regnamespace AND src.relname = ANY($1))`, r.tables)
	if err != nil {
		return nil, fmt.Errorf("rebuild: describe: %w", err)
	}
	var src, con, dst string
	_, err = pgx.ForEachRow(rows, []any{&src, &con, &dst}, func() error {
		problems = append(problems, fmt.Sprintf("%s (foreign key %s) refers to %s: rebuild them together", src, con, dst))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("rebuild: describe: %w", err)
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("rebuild: %s", strings.Join(problems, "; "))
	}

	defs := make([]tableDef, len(r.tables))
	byName := map[string]*tableDef{}
	for i, t := range r.tables {
		defs[i].name = t
		byName[t] = &defs[i]
	}
	// Keys and foreign keys, with pg_get_constraintdef's text; a foreign key
	// to a table of the group is pointed at its shadow.
	rows, err = tx.Query(ctx, `SELECT t.relname, con.conname, con.contype::text,
			CASE WHEN con.contype = 'f' AND ref.relnamespace = 'public'::regnamespace AND ref.relname = ANY($1)
				THEN replace(pg_get_constraintdef(con.oid), format('REFERENCES public.%I(', ref.relname), format('REFERENCES %I.%I(', $2::text, ref.relname))
				ELSE pg_get_constraintdef(con.oid) END
		FROM pg_constraint con JOIN pg_class t ON t.oid = con.conrelid LEFT JOIN pg_class ref ON ref.oid = con.confrelid
		WHERE t.relnamespace = 'public'::regnamespace AND t.relname = ANY($1) AND con.contype IN ('p', 'u', 'x', 'f')
		ORDER BY t.relname, con.contype DESC, con.conname`, r.tables, r.shadow)
	if err != nil {
		return nil, fmt.Errorf("rebuild: describe: %w", err)
	}
	var table, cname, ctype, def string
	_, err = pgx.ForEachRow(rows, []any{&table, &cname, &ctype, &def}, func() error {
		d := byName[table]
		if ctype == "f" {
			d.fks = append(d.fks, [2]string{cname, def})
		} else {
			d.keys = append(d.keys, [2]string{cname, def})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("rebuild: describe: %w", err)
	}
	// Indexes that back no constraint, re-pointed at the shadow table; their
	// names are free there.
	rows, err = tx.Query(ctx, `SELECT t.relname, i.relname, pg_get_indexdef(x.indexrelid),
			replace(pg_get_indexdef(x.indexrelid), format(' ON public.%I ', t.relname), format(' ON %I.%I ', $2::text, t.relname))
		FROM pg_index x JOIN pg_class t ON t.oid = x.indrelid JOIN pg_class i ON i.oid = x.indexrelid
		WHERE t.relnamespace = 'public'::regnamespace AND t.relname = ANY($1)
			AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid AND c.conrelid = x.indrelid AND c.contype IN ('p', 'u', 'x'))
		ORDER BY t.relname, i.relname`, r.tables, r.shadow)
	if err != nil {
		return nil, fmt.Errorf("rebuild: describe: %w", err)
	}
	var iname, orig string
	_, err = pgx.ForEachRow(rows, []any{&table, &iname, &orig, &def}, func() error {
		if def == orig {
			return fmt.Errorf("index %s: cannot point %q at the shadow table", iname, orig)
		}
		byName[table].indexes = append(byName[table].indexes, [2]string{iname, def})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("rebuild: describe: %w", err)
	}
	return defs, nil
}

// finishShadow makes the shadow tables what the live ones are: logged,
// indexed, with their foreign keys and statistics. The statements run on
// every apply connection at once (sessions may build indexes of one table
// together); the foreign keys come after every index.
func (r *rebuilder) finishShadow(ctx context.Context) error {
	var logged, indexes, fks []string
	for _, d := range r.defs {
		t := qualified(r.shadow, d.name)
		if r.opt.ViaProjector {
			logged = append(logged, `ALTER TABLE `+t+` SET LOGGED`)
		}
		for _, ix := range d.indexes {
			indexes = append(indexes, ix[1])
		}
		indexes = append(indexes, `ANALYZE `+t)
		var add []string
		for _, fk := range d.fks {
			add = append(add, `ALTER TABLE `+t+` ADD CONSTRAINT `+ident(fk[0])+` `+fk[1]+` NOT VALID`,
				`ALTER TABLE `+t+` VALIDATE CONSTRAINT `+ident(fk[0]))
		}
		if len(add) > 0 {
			fks = append(fks, strings.Join(add, "; "))
		}
	}
	for _, stage := range [][]string{logged, indexes, fks} {
		if err := r.onEveryConn(ctx, stage); err != nil {
			return err
		}
	}
	return nil
}

// onEveryConn runs the statements, each on whichever apply connection is
// free.
func (r *rebuilder) onEveryConn(ctx context.Context, stmts []string) error {
	next := make(chan string, len(stmts))
	for _, sql := range stmts {
		next <- sql
	}
	close(next)
	errs := make([]error, len(r.conns))
	var wg sync.WaitGroup
	for i, c := range r.conns {
		wg.Go(func() {
			for sql := range next {
				if _, err := c.Exec(ctx, sql); err != nil {
					errs[i] = fmt.Errorf("rebuild: finish (%s): %w", statementHead(sql), err)
					return
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// seqRange is a run of seqs, inclusive.
type seqRange struct{ lo, hi int64 }

// cursor is what the rounds so far replayed: every event positioned up to
// pos, and the events whose seq is in seen (those a snapshot saw
// unsequenced; they get positions above pos later).
type cursor struct {
	pos  int64
	seen []seqRange
}

// catch-up tuning: rounds outside the lock until one replays at most
// catchUpEnough events (or catchUpRounds rounds), and at most swapAttempts
// tries at the lock.
const (
	catchUpEnough = 2000
	catchUpRounds = 5
	swapAttempts  = 30
	pageSize      = 5000
)

// foldRound is the bulk round's fast path: every event of one snapshot, in
// stream order, through the fold, its rows COPYed on every apply connection;
// then the streams the fold handed over, through the projector.
func (r *rebuilder) foldRound(ctx context.Context) (cursor, error) {
	tx, err := r.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return cursor{}, fmt.Errorf("rebuild: snapshot: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	next, err := snapshotCursor(ctx, tx)
	if err != nil {
		return next, err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	copies := make(chan copyJob, 2*len(r.conns))
	var writers sync.WaitGroup
	for _, c := range r.conns {
		writers.Go(func() {
			for job := range copies {
				if ctx.Err() != nil {
					continue // drain
				}
				_, err := c.CopyFrom(ctx, pgx.Identifier{r.shadow, job.table}, foldColumns[job.table], copyRows(job.rows))
				if err != nil {
					cancel(fmt.Errorf("rebuild: copy into %s: %w (ledgerctl projections rebuild --via-projector names the event)", job.table, err))
					continue
				}
				r.rows.Add(int64(len(job.rows)))
				r.reportSometimes("replay")
			}
		})
	}
	folders := make([]*folder, max(runtime.NumCPU(), 2))
	feeds := make([]chan []domain.Record, len(folders))
	var folding sync.WaitGroup
	for i := range folders {
		folders[i] = &folder{r: r, out: map[string][][]any{}, copies: copies}
		feeds[i] = make(chan []domain.Record, 2)
		folding.Go(func() {
			f := folders[i]
			for recs := range feeds[i] {
				if ctx.Err() != nil {
					continue // drain
				}
				for _, rec := range recs {
					if err := f.add(ctx, rec); err != nil {
						cancel(err)
						break
					}
				}
			}
			if ctx.Err() == nil {
				if err := f.finish(ctx); err != nil {
					cancel(err)
				}
			}
		})
	}
	err = r.readStreams(ctx, tx, func(page []domain.Record) error {
		// A stream goes, whole and in order, to the folder of its hash.
		parts := make([][]domain.Record, len(folders))
		for _, rec := range page {
			i := int(hashID(rec.StreamID) % uint64(len(folders)))
			parts[i] = append(parts[i], rec)
		}
		for i, p := range parts {
			if len(p) == 0 {
				continue
			}
			select {
			case feeds[i] <- p:
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		}
		return nil
	})
	if err != nil {
		cancel(err)
	}
	for _, f := range feeds {
		close(f)
	}
	folding.Wait()
	close(copies)
	writers.Wait()
	if cause := context.Cause(ctx); cause != nil {
		return next, cause
	}
	a := r.newApplier(r.conns[0])
	for _, f := range folders {
		for _, recs := range f.handed {
			r.stats.Handed++
			if err := a.add(ctx, recs); err != nil {
				return next, err
			}
			r.events.Add(-int64(len(recs))) // add counts them again
		}
	}
	if err := a.flush(ctx); err != nil {
		return next, err
	}
	r.stats.Rounds++
	return next, nil
}

// readStreams reads, in q's snapshot, every event of the rebuild's stream
// types in stream order, page by page (keyset on stream id and version).
func (r *rebuilder) readStreams(ctx context.Context, q pgx.Tx, fn func([]domain.Record) error) error {
	var types []string
	for _, g := range r.stats.Groups {
		st, ok := streamTypes[g]
		if !ok || st == nil {
			types = nil
			break
		}
		types = append(types, st...)
	}
	filter, args := "", []any{uuid.Nil, 0, pageSize}
	if types != nil {
		filter, args = ` AND stream_type = ANY($4)`, append(args, types)
	}
	sql := `SELECT id, tenant_id, stream_type, stream_id, stream_version, type, schema_version, data, recorded_at
		FROM public.events WHERE (stream_id, stream_version) > ($1, $2)` + filter + `
		ORDER BY stream_id, stream_version LIMIT $3`
	for {
		rows, err := q.Query(ctx, sql, args...)
		if err != nil {
			return fmt.Errorf("rebuild: read events: %w", err)
		}
		page := make([]domain.Record, 0, pageSize)
		for rows.Next() {
			var rec domain.Record
			if err := rows.Scan((*[16]byte)(&rec.ID), (*[16]byte)(&rec.TenantID), &rec.StreamType, (*[16]byte)(&rec.StreamID),
				&rec.StreamVersion, &rec.Type, &rec.SchemaVersion, (*[]byte)(&rec.Data), &rec.RecordedAt); err != nil {
				rows.Close()
				return fmt.Errorf("rebuild: read events: %w", err)
			}
			rec.RecordedAt = rec.RecordedAt.UTC()
			page = append(page, rec)
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("rebuild: read events: %w", err)
		}
		if len(page) == 0 {
			return nil
		}
		if err := fn(page); err != nil {
			return err
		}
		last := page[len(page)-1]
		args[0], args[1] = last.StreamID, last.StreamVersion
		if len(page) < pageSize {
			return nil
		}
	}
}

// hashID spreads streams over the fold's workers.
func hashID(id uuid.UUID) uint64 {
	h := fnv.New64a()
	h.Write(id[:])
	return h.Sum64()
}

// copyRows feeds COPY, encoding uuids as pgtype.UUID: pgx would otherwise
// take uuid.UUID's driver.Valuer, a round trip through text.
func copyRows(rows [][]any) pgx.CopyFromSource {
	for _, row := range rows {
		for i, v := range row {
			switch v := v.(type) {
			case uuid.UUID:
				row[i] = pgtype.UUID{Bytes: v, Valid: true}
			case *uuid.UUID:
				row[i] = pgtype.UUID{Valid: v != nil}
				if v != nil {
					row[i] = pgtype.UUID{Bytes: *v, Valid: true}
				}
			}
		}
	}
	return pgx.CopyFromRows(rows)
}

// bulkRound replays, in one snapshot, the events after cur, spread over
// every apply connection, and returns the new cursor.
func (r *rebuilder) bulkRound(ctx context.Context, cur cursor) (cursor, error) {
	tx, err := r.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return cur, fmt.Errorf("rebuild: snapshot: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	appliers := make([]*applier, len(r.conns))
	feeds := make([]chan []domain.Record, len(r.conns))
	var wg sync.WaitGroup
	for i, c := range r.conns {
		appliers[i] = r.newApplier(c)
		feeds[i] = make(chan []domain.Record, 4)
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := appliers[i]
			for recs := range feeds[i] {
				if err := a.add(ctx, recs); err != nil {
					cancel(err)
					for range feeds[i] { // drain, so the reader never blocks
					}
					return
				}
				r.reportSometimes("replay")
			}
			if err := a.flush(ctx); err != nil {
				cancel(err)
			}
		}()
	}
	buckets := make([][]domain.Record, len(r.conns))
	next, err := r.scan(ctx, tx, cur, func(page []domain.Record) error {
		for _, rec := range page {
			h := fnv.New32a()
			h.Write(rec.StreamID[:])
			i := int(h.Sum32() % uint32(len(r.conns)))
			buckets[i] = append(buckets[i], rec)
		}
		for i, b := range buckets {
			if len(b) == 0 {
				continue
			}
			select {
			case feeds[i] <- b:
			case <-ctx.Done():
				return context.Cause(ctx)
			}
			buckets[i] = nil
		}
		return nil
	})
	for _, f := range feeds {
		close(f)
	}
	wg.Wait()
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return cur, cause
	}
	if err != nil {
		return cur, err
	}
	r.stats.Rounds++
	return next, nil
}

// recordColumns are read by scan, in this order.
const recordColumns = `seq, id, tenant_id, stream_type, stream_id, stream_version, type, schema_version,
	data, metadata, recorded_at, coalesce(position, 0), coalesce(hash, ''), coalesce(prevhash, '')`

// scan reads, in q's snapshot, the events after cur page by page, the
// sequenced ones in position order and then the unsequenced ones in seq
// order (each stream in version order either way), calls fn with each
// page, and returns the cursor of the snapshot. q must be a REPEATABLE
// READ transaction, so that every query sees the same events.
func (r *rebuilder) scan(ctx context.Context, q pgx.Tx, cur cursor, fn func([]domain.Record) error) (cursor, error) {
	next, err := snapshotCursor(ctx, q)
	if err != nil {
		return cur, err
	}

	notSeen, args := "", []any{nil, pageSize}
	if len(cur.seen) > 0 {
		lo, hi := make([]int64, len(cur.seen)), make([]int64, len(cur.seen))
		for i, s := range cur.seen {
			lo[i], hi[i] = s.lo, s.hi
		}
		notSeen = ` AND NOT EXISTS (SELECT FROM unnest($3::bigint[], $4::bigint[]) AS s(lo, hi) WHERE seq BETWEEN s.lo AND s.hi)`
		args = append(args, lo, hi)
	}
	// pages reads sql page by page, keyset on its first parameter: the last
	// row's position, or its seq when byPosition is false.
	pages := func(sql string, after int64, byPosition bool) error {
		for {
			args[0] = after
			recs, lastSeq, err := readPage(ctx, q, sql, args)
			if err != nil {
				return err
			}
			if len(recs) == 0 {
				return nil
			}
			if err := fn(recs); err != nil {
				return err
			}
			after = lastSeq
			if byPosition {
				after = recs[len(recs)-1].Position
			}
			if len(recs) < pageSize {
				return nil
			}
		}
	}
	if err := pages(`SELECT `+recordColumns+` FROM public.events WHERE position > $1`+notSeen+
		` ORDER BY position LIMIT $2`, cur.pos, true); err != nil {
		return cur, err
	}
	if err := pages(`SELECT `+recordColumns+` FROM public.events WHERE position IS NULL AND seq > $1`+notSeen+
		` ORDER BY seq LIMIT $2`, 0, false); err != nil {
		return cur, err
	}
	return next, nil
}

// snapshotCursor is the cursor of q's snapshot: its highest position and
// the seqs of its unsequenced events, as ranges.
func snapshotCursor(ctx context.Context, q pgx.Tx) (cursor, error) {
	var next cursor
	if err := q.QueryRow(ctx, `SELECT coalesce(max(position), 0) FROM public.events`).Scan(&next.pos); err != nil {
		return next, fmt.Errorf("rebuild: read events: %w", err)
	}
	rows, err := q.Query(ctx, `SELECT seq FROM public.events WHERE position IS NULL ORDER BY seq`)
	if err != nil {
		return next, fmt.Errorf("rebuild: read events: %w", err)
	}
	var seq int64
	_, err = pgx.ForEachRow(rows, []any{&seq}, func() error {
		if k := len(next.seen) - 1; k >= 0 && next.seen[k].hi == seq-1 {
			next.seen[k].hi = seq
		} else {
			next.seen = append(next.seen, seqRange{seq, seq})
		}
		return nil
	})
	if err != nil {
		return next, fmt.Errorf("rebuild: read events: %w", err)
	}
	return next, nil
}

// readPage reads one page of events and the seq of its last.
func readPage(ctx context.Context, q pgx.Tx, sql string, args []any) ([]domain.Record, int64, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, 0, fmt.Errorf("rebuild: read events: %w", err)
	}
	defer rows.Close()
	var (
		recs []domain.Record
		seq  int64
		meta []byte
	)
	for rows.Next() {
		var r domain.Record
		if err := rows.Scan(&seq, (*[16]byte)(&r.ID), (*[16]byte)(&r.TenantID), &r.StreamType, (*[16]byte)(&r.StreamID),
			&r.StreamVersion, &r.Type, &r.SchemaVersion, (*[]byte)(&r.Data), &meta, &r.RecordedAt, &r.Position, &r.Hash, &r.PrevHash); err != nil {
			return nil, 0, fmt.Errorf("rebuild: read events: %w", err)
		}
		r.RecordedAt = r.RecordedAt.UTC()
		if err := json.Unmarshal(meta, &r.Meta); err != nil {
			return nil, 0, fmt.Errorf("rebuild: metadata of event %s: %w", r.ID, err)
		}
		recs = append(recs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("rebuild: read events: %w", err)
	}
	return recs, seq, nil
}

// statementTargets finds the tables a projection statement writes: a
// statement may write several with data-modifying CTEs. "DO UPDATE" (an
// ON CONFLICT clause) and "FOR UPDATE" (a row lock) are matched only to be
// skipped.
var statementTargets = regexp.MustCompile(`(?i)\b(do\s+update|for\s+update|insert\s+into|update|delete\s+from)\s+([a-z_][a-z0-9_]*)`)

// groupOf maps every table of Groups to its group's name.
var groupOf = func() map[string]string {
	m := map[string]string{}
	for _, g := range Groups {
		for _, t := range g.Tables {
			m[t] = g.Name
		}
	}
	return m
}()

// applier runs the projection's statements for records on one apply
// connection, in pipelined batches, keeping only those that write the
// rebuild's tables.
type applier struct {
	r       *rebuilder
	conn    *pgx.Conn
	batch   *pgx.Batch
	recs    []domain.Record // the records with statements in batch
	owners  []int           // owners[i]: index in recs of statement i's record
	targets map[string]bool // statement SQL -> whether it writes a table being rebuilt
}

func (r *rebuilder) newApplier(conn *pgx.Conn) *applier {
	return &applier{r: r, conn: conn, batch: &pgx.Batch{}, targets: map[string]bool{}}
}

// add queues the statements of recs, and sends the batch once it holds
// BatchEvents events.
func (a *applier) add(ctx context.Context, recs []domain.Record) error {
	for _, rec := range recs {
		before := len(a.batch.QueuedQueries)
		if err := (Projector{}).Project(a.batch, []domain.Record{rec}); err != nil {
			return fmt.Errorf("rebuild: %w", err)
		}
		kept := a.batch.QueuedQueries[:before]
		for _, q := range a.batch.QueuedQueries[before:] {
			keep, err := a.keeps(q.SQL)
			if err != nil {
				return err
			}
			if keep {
				kept = append(kept, q)
			}
		}
		clear(a.batch.QueuedQueries[len(kept):])
		a.batch.QueuedQueries = kept
		if len(kept) > before {
			a.recs = append(a.recs, rec)
			for range len(kept) - before {
				a.owners = append(a.owners, len(a.recs)-1)
			}
		}
		a.r.events.Add(1)
		if len(a.recs) >= a.r.opt.BatchEvents {
			if err := a.flush(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// keeps tells whether a statement writes one of the tables being rebuilt.
// A statement writing a table of no group is an error: a new read model
// must join a group (or the document store's list) before rebuilds run.
func (a *applier) keeps(sql string) (bool, error) {
	if keep, ok := a.targets[sql]; ok {
		return keep, nil
	}
	var keep bool
	var tables []string
	for _, m := range statementTargets.FindAllStringSubmatch(sql, -1) {
		if verb := strings.ToLower(m[1]); strings.HasPrefix(verb, "do") || strings.HasPrefix(verb, "for") {
			continue
		}
		if _, ok := groupOf[m[2]]; !ok {
			return false, fmt.Errorf("rebuild: the projection writes %s, which is in no rebuild group", m[2])
		}
		if len(tables) > 0 && groupOf[m[2]] != groupOf[tables[0]] {
			// Rebuilding one group would have to run half of it.
			return false, fmt.Errorf("rebuild: the projection statement %q writes %s and %s, of different groups",
				statementHead(sql), tables[0], m[2])
		}
		tables, keep = append(tables, m[2]), a.r.keep[m[2]]
	}
	if len(tables) == 0 {
		return false, fmt.Errorf("rebuild: cannot tell which table the projection statement %q writes", statementHead(sql))
	}
	a.targets[sql] = keep
	return keep, nil
}

func statementHead(sql string) string {
	f := strings.Fields(sql)
	return strings.Join(f[:min(len(f), 4)], " ")
}

// flush sends the queued statements in one pipeline and names the event
// whose statement failed, if one did.
func (a *applier) flush(ctx context.Context) error {
	n := len(a.batch.QueuedQueries)
	if n == 0 {
		return nil
	}
	br := a.conn.SendBatch(ctx, a.batch)
	var first error
	for i := range n {
		if _, err := br.Exec(); err != nil {
			rec := a.recs[a.owners[i]]
			first = fmt.Errorf("rebuild: replay %s %s (%s %s v%d): %s: %w", rec.Type, rec.ID, rec.StreamType, rec.StreamID,
				rec.StreamVersion, statementHead(a.batch.QueuedQueries[i].SQL), err)
			break
		}
	}
	if err := br.Close(); first == nil && err != nil {
		first = fmt.Errorf("rebuild: replay: %w", err)
	}
	a.r.stmts.Add(int64(n))
	a.batch = &pgx.Batch{}
	a.recs, a.owners = a.recs[:0], a.owners[:0]
	return first
}

// swap catches up, then swaps the shadow tables in.
func (r *rebuilder) swap(ctx context.Context, cur cursor) error {
	catchUp := func() error {
		before := r.events.Load()
		next, err := r.bulkRound(ctx, cur)
		if err != nil {
			return err
		}
		cur = next
		r.stats.CatchUp += r.events.Load() - before
		if n := r.events.Load() - before; n <= catchUpEnough {
			return errEnough
		}
		return nil
	}
	r.report("catch-up")
	for range catchUpRounds {
		if err := catchUp(); errors.Is(err, errEnough) {
			break
		} else if err != nil {
			return err
		}
	}
	timeout, err := r.lockTimeout(ctx)
	if err != nil {
		return err
	}
	for attempt := 1; ; attempt++ {
		r.stats.SwapAttempts = attempt
		r.report("swap")
		err := r.trySwap(ctx, cur, timeout)
		if err == nil || !isLockTimeout(err) || ctx.Err() != nil {
			return err
		}
		if attempt == swapAttempts {
			return fmt.Errorf("rebuild: could not lock the live tables in %d attempts: %w", attempt, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(attempt) * 50 * time.Millisecond):
		}
		if err := catchUp(); err != nil && !errors.Is(err, errEnough) {
			return err
		}
	}
}

var errEnough = errors.New("caught up")

// lockTimeout is how long the swap may wait for its locks: below
// deadlock_timeout, so that in a deadlock with an appender the rebuild's
// wait ends first and the appender's transaction goes on.
func (r *rebuilder) lockTimeout(ctx context.Context) (time.Duration, error) {
	var ms int64
	if err := r.pool.QueryRow(ctx, `SELECT setting::bigint FROM pg_settings WHERE name = 'deadlock_timeout'`).Scan(&ms); err != nil {
		return 0, fmt.Errorf("rebuild: deadlock_timeout: %w", err)
	}
	return min(max(time.Duration(ms)*time.Millisecond/2, 10*time.Millisecond), 500*time.Millisecond), nil
}

// trySwap is one attempt at the swap transaction.
func (r *rebuilder) trySwap(ctx context.Context, cur cursor, timeout time.Duration) error {
	c := r.conns[0]
	tx, err := c.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
	if err != nil {
		return fmt.Errorf("rebuild: swap: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	ms := fmt.Sprintf("'%dms'", timeout.Milliseconds())
	live := make([]string, len(r.tables))
	for i, t := range r.tables {
		live[i] = qualified("public", t)
	}
	// The snapshot of this REPEATABLE READ transaction is taken by its
	// first query, after the lock: SET and LOCK take none.
	for _, sql := range []string{
		`SET LOCAL synchronous_commit = on`,
		`SET LOCAL lock_timeout = ` + ms,
		`SET LOCAL statement_timeout = ` + ms,
		`LOCK TABLE ` + strings.Join(live, ", ") + ` IN ACCESS EXCLUSIVE MODE`,
		`SET LOCAL statement_timeout = 0`,
	} {
		if _, err := tx.Exec(ctx, sql); err != nil {
			return fmt.Errorf("rebuild: swap: %w", err)
		}
	}
	locked := time.Now()
	before := r.events.Load()
	a := r.newApplier(c)
	if _, err := r.scan(ctx, tx, cur, func(page []domain.Record) error { return a.add(ctx, page) }); err != nil {
		return err
	}
	if err := a.flush(ctx); err != nil {
		return err
	}
	var stmts []string
	if r.keep["webhook_deliveries"] {
		// The one column of a read model that no event records: a
		// dispatcher's lease on a delivery it is sending. Carried over, so
		// the rebuild makes no other dispatcher send it again meanwhile.
		stmts = append(stmts, `UPDATE `+qualified(r.shadow, "webhook_deliveries")+` s SET lease_until = l.lease_until
			FROM public.webhook_deliveries l
			WHERE l.status = 'pending' AND l.lease_until IS NOT NULL AND s.event_id = l.event_id AND s.status = 'pending'`)
	}
	stmts = append(stmts, `CREATE SCHEMA `+ident(r.retired))
	for _, t := range r.tables {
		stmts = append(stmts, `ALTER TABLE `+qualified("public", t)+` SET SCHEMA `+ident(r.retired),
			`ALTER TABLE `+qualified(r.shadow, t)+` SET SCHEMA public`)
	}
	stmts = append(stmts, `DROP SCHEMA `+ident(r.shadow))
	for _, sql := range stmts {
		if _, err := tx.Exec(ctx, sql); err != nil {
			return fmt.Errorf("rebuild: swap: %w", err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("rebuild: swap: commit: %w", err)
	}
	r.stats.LockHeld = time.Since(locked)
	r.stats.Locked = r.events.Load() - before
	r.stats.Rounds++
	r.stats.Events = r.events.Load()
	r.stats.Statements = r.stmts.Load()
	r.stats.Rows = r.rows.Load()
	return nil
}

// afterSwap counts the new tables' rows and drops the retired ones. The
// rebuild is done by then: a failure here leaves a schema the next rebuild
// drops, and says so.
func (r *rebuilder) afterSwap(ctx context.Context) error {
	r.stats.Tables = map[string]int64{}
	for _, t := range r.tables {
		var n int64
		if err := r.pool.QueryRow(ctx, `SELECT count(*) FROM `+qualified("public", t)).Scan(&n); err != nil {
			return fmt.Errorf("rebuild: the rebuilt read models are live, but counting %s failed: %w", t, err)
		}
		r.stats.Tables[t] = n
	}
	if err := r.dropSchema(ctx, r.retired); err != nil {
		return fmt.Errorf("rebuild: the rebuilt read models are live, but the old ones remain in schema %s "+
			"(the next rebuild drops it): %w", r.retired, err)
	}
	return nil
}

// isLockTimeout reports the errors of a swap that lost a wait for a lock:
// lock_timeout, statement_timeout, or a deadlock.
func isLockTimeout(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && slices.Contains([]string{"55P03", "57014", "40P01"}, pgErr.Code)
}

// The fold: the bulk round's fast path.
//
// Replaying the projector's statements one by one costs Postgres about
// 18 µs a statement (a payment's jsonb state is rewritten, TOAST and all,
// by each of its events), some 4 statements an event: no more than 15,000
// events a second on two cores. The fold instead reads the events in
// stream order, keeps one stream's rows in memory, applies each event to
// them exactly as the projector's statements would (the same domain
// functions decide: Decode, PaymentChanges, StatusOf, PostingsOf), and
// COPYs each row once, when its stream ends. Every projection statement
// touches only rows of its own event's stream (the domain guarantees the
// references: a momo account, an API key, a delivery belong to the stream
// naming them), so stream order gives the same rows as position order.
//
// Whatever the fold cannot reproduce exactly (a reference to a row its
// stream did not create, a state of a shape the statements would fail on)
// sends the whole stream to the projector instead, after the COPYs. The
// catch-up rounds and the locked tail always use the projector.
// TestRebuildReproducesEveryGroup checks both paths against the inline
// projection, over a fixture that must hold every registered event type,
// so the fold cannot drift from projector.go unnoticed: a change to a
// projection statement must be mirrored here. A table the fold does not
// know at all (a new read model) makes the bulk round use the projector.

// foldColumns are the columns the fold writes, per table; the others take
// their defaults, as they do in the projector's INSERTs.
var foldColumns = map[string][]string{
	"tenants":            {"id", "name", "owner_user_id", "version", "created_at", "updated_at"},
	"api_keys":           {"api_key", "tenant_id", "secret_hash", "created_at", "revoked_at"},
	"users":              {"id", "tenant_id", "record_id", "email", "name", "role", "status", "version", "created_at", "updated_at", "is_verified", "details", "company_name", "phone_number", "default_momo_account_id"},
	"momo_accounts":      {"id", "tenant_id", "user_id", "label", "phone_number", "mobile_network", "country_code", "added_version"},
	"kyc_documents":      {"id", "tenant_id", "user_id", "document_type", "file_name", "content_type", "size", "sha256", "created_at"},
	"merchants":          {"id", "tenant_id", "name", "country", "currency", "payout_method", "bank_name", "account_number", "phone_number", "lnurl", "version", "created_at", "updated_at"},
	"payments":           {"id", "tenant_id", "user_id", "merchant_id", "status", "state", "version", "created_at", "updated_at"},
	"payment_documents":  {"id", "tenant_id", "payment_id", "file_name", "content_type", "size", "sha256", "created_at"},
	"payment_deadlines":  {"payment_id", "tenant_id", "expires_at"},
	"webhook_deliveries": {"event_id", "tenant_id", "payment_id", "stream_version", "type", "occurred_at", "payment", "status", "attempts", "next_attempt_at"},
	"webhook_attempts":   {"event_id", "attempt", "tenant_id", "payment_id", "type", "at", "status_code", "duration_ms", "error"},
	"ledger_postings":    {"event_id", "line", "tenant_id", "recorded_at", "account", "currency", "side", "amount"},
	"dashboard_users":    {"id", "tenant_id", "email", "password_hash", "setup_token_hash", "setup_expires_at", "version", "created_at", "updated_at"},
	"dashboard_sessions": {"session_hash", "user_id", "tenant_id", "created_at", "expires_at", "revoked_at"},
}

// streamTypes are the stream types whose events write a group's tables
// (Projector.Project dispatches on the stream type); nil: any stream, for
// postings, which any event may carry.
var streamTypes = map[string][]string{
	"tenants": {"tenant"}, "users": {"user"}, "merchants": {"merchant"}, "payments": {"payment"}, "postings": nil,
	"dashboard": {"dashboard_user"},
}

// errUnfoldable makes the fold hand a stream to the projector.
var errUnfoldable = errors.New("stream the fold cannot reproduce")

// jsonObject is a jsonb object by its top-level members, as the
// projection's || and jsonb_set merge them.
type jsonObject map[string]json.RawMessage

// parseObject splits a JSON object into its top-level members, without
// decoding their values (which stay slices of raw). raw is Postgres's text
// of a jsonb value, or encoding/json's output: valid JSON (rawjson).
// Anything else hands the stream to the projector.
func parseObject(raw []byte) (jsonObject, error) {
	o := make(jsonObject, 64)
	err := rawjson.Object(raw, func(name string, _, value []byte) error {
		o[name] = value
		return nil
	})
	if err != nil {
		return nil, errUnfoldable
	}
	return o, nil
}

// text encodes o for a jsonb column. Its members are valid JSON already
// (parsed from Postgres, or encoded by encoding/json), so they are written
// as they are, in no particular order: Postgres normalises member order
// and spacing, as it does for the projector's parameters.
func (o jsonObject) text() []byte {
	n := 2
	for k, v := range o {
		n += len(k) + len(v) + 4
	}
	b := make([]byte, 1, n)
	b[0] = '{'
	for k, v := range o {
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = appendJSONString(b, k)
		b = append(b, ':')
		b = append(b, v...)
	}
	return append(b, '}')
}

// appendJSONString appends s as a JSON string.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// merge is `o || jsonOf(changes)`.
func (o jsonObject) merge(changes map[string]any) {
	for k, v := range changes {
		o[k] = json.RawMessage(jsonOf(v))
	}
}

// Rows of one stream, held until the stream ends.
type (
	tenantRow struct {
		id, owner        uuid.UUID
		name             string
		version          int
		created, updated time.Time
	}
	apiKeyRow struct {
		key, hash string
		tenant    uuid.UUID
		created   time.Time
		revoked   *time.Time
	}
	userRow struct {
		id, tenant, record        uuid.UUID
		email, name, role, status string
		version                   int
		created, updated          time.Time
		verified                  bool
		details                   jsonObject
		company, phone            string
		defaultMomo               *uuid.UUID
	}
	momoRow struct {
		id, tenant, user               uuid.UUID
		label, phone, network, country string
		added                          int
	}
	merchantRow struct {
		e                domain.MerchantCreated
		tenant           uuid.UUID
		version          int
		created, updated time.Time
	}
	paymentRow struct {
		id, tenant, user, merchant uuid.UUID
		status                     string
		state                      jsonObject
		version                    int
		created, updated           time.Time
	}
	deliveryRow struct {
		event    uuid.UUID
		version  int
		typ      string
		occurred time.Time
		payment  []byte // jsonb; nil until copyStateToDeliveries
		status   string
		attempts int
		next     time.Time
		// delivered: a 2xx deleted the row (projectWebhookAttempt); kept
		// here only so later attempts at it change nothing, as in SQL.
		delivered bool
	}
)

// streamFold is the fold of the stream being read.
type streamFold struct {
	id           uuid.UUID
	recs         []domain.Record // the stream's records, kept only until it proves foldable or not
	bad          bool            // handed to the projector
	tenant       *tenantRow
	keys         []*apiKeyRow
	user         *userRow
	momo         []*momoRow
	merchant     *merchantRow
	payment      *paymentRow
	deadline     *time.Time
	deliveries   []*deliveryRow
	attempts     map[attemptKey]bool // webhook attempts seen; ON CONFLICT DO NOTHING
	dashUser     *dashboardUserRow
	dashSessions []*dashboardSessionRow
	rows         map[string][][]any // insert-only rows, written when the stream ends (nothing if it is handed over)
}

// folder folds the streams one bulk worker is given.
type folder struct {
	r      *rebuilder
	cur    *streamFold
	out    map[string][][]any // rows ready for COPY, per table
	copies chan<- copyJob
	handed [][]domain.Record // streams for the projector
}

// copyJob is a chunk of rows for one table.
type copyJob struct {
	table string
	rows  [][]any
}

const copyChunk = 2000

// add folds one record; records come in stream order.
func (f *folder) add(ctx context.Context, rec domain.Record) error {
	if f.cur == nil || f.cur.id != rec.StreamID {
		if err := f.endStream(ctx); err != nil {
			return err
		}
		f.cur = &streamFold{id: rec.StreamID, rows: map[string][][]any{}}
	}
	s := f.cur
	s.recs = append(s.recs, rec)
	f.r.events.Add(1)
	if s.bad {
		return nil
	}
	if err := f.apply(s, rec); errors.Is(err, errUnfoldable) {
		s.bad = true
	} else if err != nil {
		return err
	}
	return nil
}

// endStream writes the rows of the stream just folded, or hands it over.
func (f *folder) endStream(ctx context.Context) error {
	s := f.cur
	if s == nil {
		return nil
	}
	f.cur = nil
	if s.bad {
		f.handed = append(f.handed, s.recs)
		return nil
	}
	emit := func(table string, row ...any) {
		if f.r.keep[table] {
			f.out[table] = append(f.out[table], row)
		}
	}
	if t := s.tenant; t != nil {
		emit("tenants", t.id, t.name, t.owner, t.version, t.created, t.updated)
	}
	for _, k := range s.keys {
		emit("api_keys", k.key, k.tenant, k.hash, k.created, k.revoked)
	}
	if u := s.user; u != nil {
		emit("users", u.id, u.tenant, u.record, u.email, u.name, u.role, u.status, u.version, u.created, u.updated,
			u.verified, u.details.text(), u.company, u.phone, u.defaultMomo)
	}
	for _, m := range s.momo {
		emit("momo_accounts", m.id, m.tenant, m.user, m.label, m.phone, m.network, m.country, m.added)
	}
	if m := s.merchant; m != nil {
		e := m.e
		emit("merchants", e.MerchantID, m.tenant, e.Name, e.Country, e.Currency, e.PayoutMethod, e.BankName,
			e.AccountNumber, e.PhoneNumber, e.LNURL, m.version, m.created, m.updated)
	}
	if p := s.payment; p != nil {
		emit("payments", p.id, p.tenant, p.user, p.merchant, p.status, p.state.text(), p.version, p.created, p.updated)
		if s.deadline != nil {
			emit("payment_deadlines", p.id, p.tenant, *s.deadline)
		}
		s.copyStateToDeliveries()
		for _, d := range s.deliveries {
			if d.delivered {
				continue
			}
			emit("webhook_deliveries", d.event, p.tenant, p.id, d.version, d.typ, d.occurred, d.payment, d.status, d.attempts, d.next)
		}
	}
	s.emitDashboardUser(emit)
	for table, rows := range s.rows {
		if f.r.keep[table] {
			f.out[table] = append(f.out[table], rows...)
		}
	}
	for table, rows := range f.out {
		if len(rows) >= copyChunk {
			if err := f.send(ctx, table); err != nil {
				return err
			}
		}
	}
	return nil
}

func (f *folder) send(ctx context.Context, table string) error {
	select {
	case f.copies <- copyJob{table: table, rows: f.out[table]}:
		f.out[table] = nil
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// finish ends the last stream and sends every row left.
func (f *folder) finish(ctx context.Context) error {
	if err := f.endStream(ctx); err != nil {
		return err
	}
	for table, rows := range f.out {
		if len(rows) > 0 {
			if err := f.send(ctx, table); err != nil {
				return err
			}
		}
	}
	return nil
}

// insert queues an insert-only row of the stream.
func (s *streamFold) insert(table string, row ...any) {
	s.rows[table] = append(s.rows[table], row)
}

// apply is Project for one record, on the stream's rows in memory. Each
// case mirrors the statements of projector.go's file for the stream type.
func (f *folder) apply(s *streamFold, r domain.Record) error {
	if r.StreamType == "payment" && r.Type == createdType && r.SchemaVersion == createdVersion {
		if err := s.paymentCreated(r); !errors.Is(err, errSlowPath) {
			return err
		}
	}
	e, err := r.Decode()
	if err != nil {
		return fmt.Errorf("rebuild: project %s %s: %w", r.Type, r.ID, err)
	}
	switch r.StreamType {
	case "tenant":
		err = s.applyTenant(r, e)
	case "user":
		err = s.applyUser(r, e)
	case "merchant":
		err = s.applyMerchant(r, e)
	case "payment":
		err = s.applyPayment(r, e)
	case "dashboard_user":
		err = s.applyDashboardUser(r, e)
	}
	if err != nil {
		return err
	}
	for i, p := range domain.PostingsOf(e) { // postings.go
		amount := pgtypeNumeric(p.Amount.String())
		s.insert("ledger_postings", r.ID, i+1, r.TenantID, r.RecordedAt, p.Account, p.Currency, p.Side, amount)
	}
	return nil
}

// tenants.go
func (s *streamFold) applyTenant(r domain.Record, e domain.Event) error {
	switch e := e.(type) {
	case domain.TenantCreated:
		if e.TenantID != r.StreamID || s.tenant != nil {
			return errUnfoldable
		}
		s.tenant = &tenantRow{id: e.TenantID, name: e.Name, owner: e.OwnerUserID, version: r.StreamVersion,
			created: r.RecordedAt, updated: r.RecordedAt}
		return nil
	case domain.APIKeyCreated:
		for _, k := range s.keys {
			if k.key == e.APIKey {
				return errUnfoldable // the insert would fail; let it, in the projector
			}
		}
		s.keys = append(s.keys, &apiKeyRow{key: e.APIKey, tenant: r.TenantID, hash: e.SecretHash, created: r.RecordedAt})
	case domain.APIKeyRevoked:
		var found bool
		for _, k := range s.keys {
			if k.key == e.APIKey && k.tenant == r.TenantID {
				at := r.RecordedAt
				k.revoked, found = &at, true
			}
		}
		if !found {
			return errUnfoldable // a key of another stream, or none
		}
	}
	if s.tenant == nil {
		return errUnfoldable
	}
	s.tenant.version, s.tenant.updated = r.StreamVersion, r.RecordedAt
	return nil
}

// user_project.go
func (s *streamFold) applyUser(r domain.Record, e domain.Event) error {
	if c, ok := e.(domain.UserCreated); ok {
		if c.UserID != r.StreamID || s.user != nil {
			return errUnfoldable
		}
		s.user = &userRow{id: c.UserID, tenant: r.TenantID, record: r.ID, email: c.Email, name: c.Name, role: c.Role,
			status: domain.UserActive, version: r.StreamVersion, created: r.RecordedAt, updated: r.RecordedAt, details: jsonObject{}}
		return nil
	}
	u := s.user
	if u == nil {
		return errUnfoldable
	}
	momo := func(id uuid.UUID) (int, error) {
		for i, m := range s.momo {
			if m.id == id {
				return i, nil
			}
		}
		return 0, errUnfoldable
	}
	switch e := e.(type) {
	case domain.UserUpdated:
		d, err := parseObject([]byte(jsonOf(e.UserDetails)))
		if err != nil {
			return err
		}
		u.details = d
	case domain.UserVerificationChanged:
		u.verified = e.IsVerified
	case domain.UserDisabled:
		u.status = domain.UserInactive
	case domain.ProfileUpdated:
		u.name, u.company, u.phone = e.Name, e.CompanyName, e.PhoneNumber
		sector, _ := json.Marshal(e.Sector)
		first, _ := json.Marshal(e.FirstName)
		u.details["sector"], u.details["firstName"], u.details["address"] = sector, first, json.RawMessage(jsonOf(e.Address))
	case domain.MomoAccountAdded:
		for _, m := range s.momo {
			if m.phone == e.PhoneNumber {
				return errUnfoldable // unique (user_id, phone_number): the insert would fail
			}
		}
		if _, err := momo(e.AccountID); err == nil {
			return errUnfoldable
		}
		s.momo = append(s.momo, &momoRow{id: e.AccountID, tenant: r.TenantID, user: r.StreamID, label: e.Label,
			phone: e.PhoneNumber, network: e.MobileNetwork, country: e.CountryCode, added: r.StreamVersion})
	case domain.MomoAccountUpdated:
		i, err := momo(e.AccountID)
		if err != nil {
			return err
		}
		for j, m := range s.momo {
			if j != i && m.phone == e.PhoneNumber {
				return errUnfoldable
			}
		}
		s.momo[i].label, s.momo[i].phone = e.Label, e.PhoneNumber
	case domain.DefaultMomoAccountChanged:
		u.defaultMomo = nil
		if e.AccountID != nil {
			id := *e.AccountID
			u.defaultMomo = &id
		}
	case domain.MomoAccountRemoved:
		i, err := momo(e.AccountID)
		if err != nil {
			return err
		}
		s.momo = slices.Delete(s.momo, i, i+1)
	case domain.KYCDocumentUploaded:
		s.insert("kyc_documents", e.DocumentID, r.TenantID, r.StreamID, e.DocumentType, e.FileName, e.ContentType,
			e.Size, e.SHA256, r.RecordedAt)
	}
	u.version, u.updated = r.StreamVersion, r.RecordedAt
	return nil
}

// merchants.go
func (s *streamFold) applyMerchant(r domain.Record, e domain.Event) error {
	if c, ok := e.(domain.MerchantCreated); ok {
		if c.MerchantID != r.StreamID || s.merchant != nil {
			return errUnfoldable
		}
		s.merchant = &merchantRow{e: c, tenant: r.TenantID, version: r.StreamVersion, created: r.RecordedAt, updated: r.RecordedAt}
		return nil
	}
	if s.merchant == nil {
		return errUnfoldable
	}
	s.merchant.version, s.merchant.updated = r.StreamVersion, r.RecordedAt
	return nil
}

// payments.go
func (s *streamFold) applyPayment(r domain.Record, e domain.Event) error {
	switch e := e.(type) {
	case domain.PaymentCreated:
		state, err := parseObject(r.Data)
		if err != nil {
			return err
		}
		return s.created(r, state, e.UserID, e.MerchantID, e.Status, e.ExpiresAt)
	case domain.PaymentDocumentAttached:
		s.insert("payment_documents", e.DocumentID, r.TenantID, r.StreamID, e.FileName, e.ContentType, e.Size, e.SHA256, e.At)
		return s.mergePayment(r, e)
	case domain.PaymentWebhookAttempted:
		key := attemptKey{e.EventID, e.Attempt}
		if s.attempts == nil {
			s.attempts = map[attemptKey]bool{}
		}
		if !s.attempts[key] { // ON CONFLICT DO NOTHING
			s.attempts[key] = true
			s.insert("webhook_attempts", e.EventID, e.Attempt, r.TenantID, r.StreamID, e.Type, e.At, e.StatusCode, e.DurationMs, e.Error)
		}
		var d *deliveryRow
		for _, x := range s.deliveries {
			if x.event == e.EventID {
				d = x
			}
		}
		if d == nil {
			return errUnfoldable // the delivery of another stream, or none
		}
		switch {
		case d.delivered: // the DELETE left no row to move on
		case e.Delivered:
			d.delivered = true
		default:
			d.status = "pending"
			if e.NextAttemptAt == nil {
				d.status = "exhausted"
			}
			d.attempts = e.Attempt
			if e.NextAttemptAt != nil {
				d.next = *e.NextAttemptAt
			}
		}
		return s.mergePayment(r, e)
	default:
		if err := s.mergePayment(r, e); err != nil {
			return err
		}
		if domain.StatusOf(e) != "" {
			s.deadline = nil
			s.queueWebhook(r)
		}
		return nil
	}
}

// created is payments.go's PaymentCreated case: the row with the event's
// data as its state, the deadline, the first delivery.
func (s *streamFold) created(r domain.Record, state jsonObject, user, merchant uuid.UUID, status string, expires time.Time) error {
	if s.payment != nil {
		return errUnfoldable
	}
	s.payment = &paymentRow{id: r.StreamID, tenant: r.TenantID, user: user, merchant: merchant, status: status,
		state: state, version: r.StreamVersion, created: r.RecordedAt, updated: r.RecordedAt}
	s.deadline = &expires
	s.queueWebhook(r)
	return nil
}

// The fast path of payment.created, the largest event: its data is the
// payment's JSON, which the fold splits into members anyway, so the four
// fields the row needs are read from those members instead of decoding the
// whole event into domain.PaymentCreated. Only at the registered schema
// version (no upcaster runs) and with each member present as
// encoding/json wrote it; otherwise errSlowPath, and the event is decoded.
var (
	createdType    = domain.PaymentCreated{}.EventType()
	createdVersion = func() int { d, _ := domain.LookupEvent(createdType); return d.Version }()
	errSlowPath    = errors.New("decode the event")
)

func (s *streamFold) paymentCreated(r domain.Record) error {
	state, err := parseObject(r.Data)
	if err != nil {
		return errSlowPath
	}
	var (
		user, merchant uuid.UUID
		status         string
		expires        time.Time
	)
	for key, dst := range map[string]any{"userId": &user, "merchantId": &merchant, "status": &status, "expiresAt": &expires} {
		raw, ok := state[key]
		if !ok || json.Unmarshal(raw, dst) != nil {
			return errSlowPath
		}
	}
	if err := s.created(r, state, user, merchant, status, expires); err != nil {
		return err
	}
	return nil // no postings: payment.created carries none (PostingsOf)
}

// queueWebhook is the delivery the projection writes with a status event
// (projectPayment, mergePayment): a pending delivery with the payment's
// state, when the state has a webhookUrl.
func (s *streamFold) queueWebhook(r domain.Record) {
	p := s.payment
	if p == nil {
		return
	}
	url, ok := p.state["webhookUrl"]
	if !ok || string(url) == "null" || string(url) == `""` {
		return
	}
	s.deliveries = append(s.deliveries, &deliveryRow{event: r.ID, version: r.StreamVersion, typ: r.Type, occurred: r.RecordedAt,
		status: "pending", next: r.RecordedAt})
}

// copyStateToDeliveries gives the deliveries queued since the payment's
// state last changed their copy of it. It runs before the state changes
// and when the stream's rows are written: a delivery delivered before
// either (most are) never pays for the copy of a state it does not keep.
func (s *streamFold) copyStateToDeliveries() {
	var text []byte
	for _, d := range s.deliveries {
		if d.payment == nil && !d.delivered {
			if text == nil {
				text = s.payment.state.text()
			}
			d.payment = text
		}
	}
}

// mergePayment is mergePayment's UPDATE.
func (s *streamFold) mergePayment(r domain.Record, e domain.Event) error {
	p := s.payment
	if p == nil {
		return errUnfoldable
	}
	changes, line := domain.PaymentChanges(e)
	logs, ok := p.state["statusLogs"]
	if !ok || len(logs) == 0 || logs[0] != '[' {
		return errUnfoldable // jsonb_set would store NULL or wrap a scalar
	}
	if _, ok := changes["statusLogs"]; ok {
		return errUnfoldable
	}
	if len(changes) > 0 || line != nil {
		s.copyStateToDeliveries()
	}
	p.state.merge(changes)
	if line != nil { // (state->'statusLogs') || '[line]'
		if logs[len(logs)-1] != ']' {
			return errUnfoldable
		}
		raw := make([]byte, 0, len(logs)+256)
		raw = append(raw, logs[:len(logs)-1]...)
		if strings.TrimSpace(string(logs[1:len(logs)-1])) != "" {
			raw = append(raw, ',')
		}
		raw = append(raw, jsonOf(line)...)
		logs = append(raw, ']')
	}
	p.state["statusLogs"] = logs
	if status := domain.StatusOf(e); status != "" {
		p.status = status
	}
	p.version, p.updated = r.StreamVersion, r.RecordedAt
	return nil
}

// attemptKey is webhook_attempts' primary key.
type attemptKey struct {
	event   uuid.UUID
	attempt int
}

// pgtypeNumeric is a decimal's text as a numeric, as the projector's
// parameter arrives (decimal.Decimal is sent as its String()).
func pgtypeNumeric(s string) pgtype.Numeric {
	var n pgtype.Numeric
	if err := n.Scan(s); err != nil {
		return pgtype.Numeric{} // NULL: the NOT NULL column refuses it loudly
	}
	return n
}
