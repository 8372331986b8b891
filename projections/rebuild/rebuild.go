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
)

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
	{Name: "payments", Tables: []string{"payments", "payment_documents", "payment_deadlines", "deposit_references"}},
	{Name: "postings", Tables: []string{"ledger_entries"}},
	{Name: "dashboard", Tables: []string{"dashboard_users", "dashboard_sessions"}},
	{Name: "bank_credits", Tables: []string{"bank_credits", "unmatched_funds"}},
	{Name: "reconciliation", Tables: []string{"reconciliation_breaks"}},
}

// GroupNames lists the names Run takes, "all" first.
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
	Tables       map[string]int64 `json:"tables"`       // rows per table right after the swap (Verify: live rows compared)
	Events       int64            `json:"events"`       // events replayed, all rounds
	Statements   int64            `json:"statements"`   // projection statements run on the shadow tables
	Rows         int64            `json:"rows"`         // rows the fold wrote with COPY
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

// Progress is what Run reports while it runs.
type Progress struct {
	Phase   string // "replay", "finish", "catch-up", "swap" (Verify: "compare"), "done"
	Events  int64  // events replayed so far
	Elapsed time.Duration
}

// Options tune a rebuild; the zero value is the default.
type Options struct {
	Progress    func(Progress) // called now and then, from one goroutine at a time; nil: never
	Connections int            // apply (and COPY) connections for the bulk round; 0: 2
}

// Run rebuilds the read models of group ("all" or "" for every group)
// from the first event and swaps them in, as the package comment says.
func Run(ctx context.Context, pool *pgxpool.Pool, group string, progress func(Progress)) (Stats, error) {
	return RunWith(ctx, pool, group, Options{Progress: progress})
}

// The garbage collector's settings for a process whose work is a rebuild
// (WithGC). A rebuild allocates much and keeps little (a page of events,
// one stream's rows per fold worker, the COPY chunks in flight), and each
// collection marks all it keeps, so their number is what they cost. The collector runs only when the process's memory reaches a soft
// limit (no growth target): fewer collections than with any target, and
// the same peak whatever the history's length, since even a short
// history's rebuild allocates more than the limit; with a growth target a
// short rebuild ended before its heap reached the limit and peaked lower
// than a long one. Figures: docs/performance.md, Replay.
const (
	GCPercent   = -1        // off: collect at the memory limit only
	MemoryLimit = 384 << 20 // bytes of Go memory
)

// WithGC applies GCPercent and MemoryLimit, each unless its environment
// variable (GOGC, GOMEMLIMIT) chose one, and returns the function that
// puts the previous settings back. The package never changes its
// process's collector on its own: ledgerctl and ledgerbench call this
// around a rebuild.
func WithGC() (restore func()) {
	var restores []func()
	if os.Getenv("GOGC") == "" {
		previous := debug.SetGCPercent(GCPercent)
		restores = append(restores, func() { debug.SetGCPercent(previous) })
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		previous := debug.SetMemoryLimit(MemoryLimit)
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

// RunWith is Run with options.
func RunWith(ctx context.Context, pool *pgxpool.Pool, group string, opt Options) (Stats, error) {
	r, err := newRebuilder(pool, group, opt)
	if err != nil {
		return Stats{}, err
	}
	err = r.build(ctx, func(cur cursor) error {
		if err := r.swap(ctx, cur); err != nil {
			return err
		}
		r.stats.Total = time.Since(r.start)
		r.report("done")
		return r.afterSwap(ctx)
	})
	return r.stats, err
}

// newRebuilder is the rebuild of group's tables, not started.
func newRebuilder(pool *pgxpool.Pool, group string, opt Options) (*rebuilder, error) {
	groups, err := pickGroups(group)
	if err != nil {
		return nil, err
	}
	if opt.Connections <= 0 {
		opt.Connections = 2
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
		if _, ok := tables[t]; !ok {
			return nil, fmt.Errorf("rebuild: the projection writes no table %s", t)
		}
	}
	suffix := make([]byte, 6)
	rand.Read(suffix)
	r.shadow = "rebuild_" + hex.EncodeToString(suffix)
	r.retired = r.shadow + "_old"
	return r, nil
}

// build holds the rebuild lock while it folds every stream into new shadow
// tables, finishes them and calls then with the fold's cursor; the shadow
// schema is gone when it returns (then swapped it in or it is dropped).
func (r *rebuilder) build(ctx context.Context, then func(cursor) error) (err error) {
	// One rebuild (or verify) at a time: its lock also makes the leftovers
	// of a crashed one safe to drop.
	lockConn, err := r.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("rebuild: %w", err)
	}
	defer lockConn.Release()
	var locked bool
	if err := lockConn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, int64(rebuildLockKey)).Scan(&locked); err != nil {
		return fmt.Errorf("rebuild: lock: %w", err)
	}
	if !locked {
		return errors.New("rebuild: another rebuild or audit verify is running")
	}
	defer lockConn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, int64(rebuildLockKey))
	if err := r.dropLeftovers(ctx); err != nil {
		return err
	}

	if err := r.connect(ctx); err != nil {
		return err
	}
	defer r.close()
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		err = errors.Join(err, r.dropSchema(cctx, r.shadow))
	}()
	if err := r.createShadow(ctx); err != nil {
		return err
	}

	t := time.Now()
	r.report("replay")
	cur, err := r.foldRound(ctx)
	if err != nil {
		return err
	}
	r.stats.Replay = time.Since(t)
	t = time.Now()
	r.report("finish")
	if err := r.finishShadow(ctx); err != nil {
		return err
	}
	r.stats.Finish = time.Since(t)
	return then(cur)
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
	opt     Options
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
