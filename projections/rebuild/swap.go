package rebuild

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// swap catches up, then swaps the shadow tables in.
func (r *rebuilder) swap(ctx context.Context, cur cursor) error {
	if err := r.catchUp(ctx, &cur); err != nil {
		return err
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
		if _, err := r.catchUpOnce(ctx, &cur); err != nil {
			return err
		}
	}
}

// catchUp replays the events committed since *cur, round after round,
// until a round replays at most catchUpEnough events or catchUpRounds
// rounds have run, and advances *cur.
func (r *rebuilder) catchUp(ctx context.Context, cur *cursor) error {
	r.report("catch-up")
	for range catchUpRounds {
		if enough, err := r.catchUpOnce(ctx, cur); err != nil || enough {
			return err
		}
	}
	return nil
}

// catchUpOnce is one catch-up round from *cur; enough is whether it
// replayed at most catchUpEnough events.
func (r *rebuilder) catchUpOnce(ctx context.Context, cur *cursor) (enough bool, err error) {
	before := r.events.Load()
	next, err := r.catchUpRound(ctx, *cur)
	if err != nil {
		return false, err
	}
	*cur = next
	n := r.events.Load() - before
	r.stats.CatchUp += n
	return n <= catchUpEnough, nil
}

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
	if _, err := r.replayAfter(ctx, tx, cur, r.newApplier(c)); err != nil {
		return err
	}
	stmts := []string{`CREATE SCHEMA ` + ident(r.retired)}
	for _, d := range r.defs {
		stmts = append(stmts, `ALTER TABLE `+qualified("public", d.name)+` SET SCHEMA `+ident(r.retired),
			`ALTER TABLE `+qualified(r.shadow, d.name)+` SET SCHEMA public`)
		stmts = append(stmts, autovacuumRestore(d)...)
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
