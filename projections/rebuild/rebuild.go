package rebuild

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledger/ledger/domain"
)

// Rebuilding read models (STYLE §5): the events are replayed from the
// start into shadow tables, which then replace the live ones in one short
// transaction while ledgerd keeps serving.
//
//  1. Shadow tables. A schema rebuild_<random> gets a copy of each table of
//     the group: CREATE TABLE ... (LIKE public.t INCLUDING ALL EXCLUDING
//     INDEXES), plus its primary-key and unique constraints under their
//     original names (the projection's UPDATEs and ON CONFLICTs need them):
//     at once for a replay through the projector, after its COPYs for the
//     fold's (one sorted build instead of row-by-row inserts in stream
//     order), before the streams it hands over.
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
	{Name: "postings", Tables: []string{"ledger_entries"}},
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
	Finish       time.Duration    `json:"finishNs"`     // keys, indexes, foreign keys, logging, analyze; the streams the fold handed over
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

// The garbage collector's settings for a process whose work is a rebuild
// (WithRebuildGC). A rebuild allocates some 4 kB an event and keeps little
// (a page of events, one stream's rows per fold worker, the COPY chunks in
// flight): 50 to 90 MB. Each collection marks all of that, some 40 ms of
// CPU, so their number is what they cost. The collector runs only when the
// process's memory reaches a soft limit of 384 MiB (no growth target):
// 14 collections for a million events, against 29 with a target of five
// times the live heap under a 256 MiB limit, the settings before, which
// cost 0.7-1.0 s more of the Go CPU's 8.5 s. Collecting at the limit alone
// also keeps the peak the same whatever the history's length, some 400 MB
// of RSS for 100k events and for 1M: a 100k-event rebuild allocates more
// than the limit. With a growth target (nine times, under 512 MiB) a
// 100k-event rebuild ended before its heap reached the limit, 308 MB
// against 534 for 1M.
const (
	RebuildGCPercent   = -1        // off: collect at the memory limit only
	RebuildMemoryLimit = 384 << 20 // bytes of Go memory
)

// WithRebuildGC applies RebuildGCPercent and RebuildMemoryLimit, each
// unless its environment variable (GOGC, GOMEMLIMIT) chose one, and
// returns the function that puts the previous settings back. The package
// never changes its process's collector on its own: ledgerctl and
// ledgerbench call this around a rebuild.
func WithRebuildGC() (restore func()) {
	var restores []func()
	if os.Getenv("GOGC") == "" {
		previous := debug.SetGCPercent(RebuildGCPercent)
		restores = append(restores, func() { debug.SetGCPercent(previous) })
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		previous := debug.SetMemoryLimit(RebuildMemoryLimit)
		restores = append(restores, func() { debug.SetMemoryLimit(previous) })
	}
	return func() {
		for _, r := range restores {
			r()
		}
	}
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
	tables  []string          // the group's tables, in group order
	keep    map[string]bool   // the same, as a set
	defs    []tableDef        // the live tables' keys, indexes and foreign keys
	shadow  string            // schema of the shadow tables
	retired string            // schema the live tables move to at the swap
	conns   []*pgx.Conn       // search_path = shadow; conns[0] also swaps
	handed  [][]domain.Record // streams the fold handed over, for the projector once the keys are built
	lz4     bool              // the server compresses TOAST with lz4
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
