package eventstore

import (
	"bufio"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// noTransactionMarker, as a migration file's first line, makes Migrate run
// the file outside a transaction.
const noTransactionMarker = "-- migrate: no transaction"

// outsideTransaction reports whether a migration file carries the marker.
func outsideTransaction(sql string) bool {
	first, _, _ := strings.Cut(sql, "\n")
	return strings.TrimSpace(first) == noTransactionMarker
}

// runOutsideTransaction runs a marked migration file's statements one by one,
// each in its own implicit transaction: Postgres runs a multi-statement query
// string as one transaction block, which CREATE INDEX CONCURRENTLY refuses.
// A statement ends with a semicolon at the end of a line, so the file holds
// no dollar-quoted bodies (functions belong in transactional files).
//
// The caller records the version only after the last statement succeeds, so
// a failure or a crash part way through runs the whole file again on the
// next start: every statement must be safe to rerun. A concurrent index build
// that fails leaves an INVALID index behind, which CREATE INDEX CONCURRENTLY
// IF NOT EXISTS would then skip, keeping the broken index for good. So a file
// drops it first:
//
//	-- migrate: no transaction
//	DROP INDEX CONCURRENTLY IF EXISTS events_example;
//	CREATE INDEX CONCURRENTLY events_example ON events (example);
func runOutsideTransaction(ctx context.Context, conn *pgx.Conn, sql string) error {
	for _, stmt := range splitStatements(sql) {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("%s: %w", firstLine(stmt), err)
		}
	}
	return nil
}

// splitStatements splits sql after each line ending in a semicolon, and
// drops what holds only comments and blank lines.
func splitStatements(sql string) []string {
	var stmts []string
	var cur strings.Builder
	hasCode := false
	flush := func() {
		if hasCode {
			stmts = append(stmts, strings.TrimSpace(cur.String()))
		}
		cur.Reset()
		hasCode = false
	}
	sc := bufio.NewScanner(strings.NewReader(sql))
	sc.Buffer(nil, len(sql)+1)
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		cur.WriteString(line)
		cur.WriteByte('\n')
		if trimmed != "" && !strings.HasPrefix(trimmed, "--") {
			hasCode = true
		}
		if strings.HasSuffix(trimmed, ";") && !strings.HasPrefix(trimmed, "--") {
			flush()
		}
	}
	flush()
	return stmts
}

// firstLine names a statement in an error by its first line of code.
func firstLine(stmt string) string {
	for _, line := range strings.Split(stmt, "\n") {
		if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "--") {
			return t
		}
	}
	return stmt
}

// lockMigrations takes the migration lock on conn, trying again until it is
// free or ctx ends. It never waits inside pg_advisory_lock: a statement
// blocked there holds a snapshot, and CREATE INDEX CONCURRENTLY, run by the
// lock's holder, waits for every older snapshot to go away, so the holder and
// the waiter would wait for each other until Postgres's deadlock detector
// cancelled one of them. pg_try_advisory_lock returns at once, leaving no
// snapshot behind between tries.
func lockMigrations(ctx context.Context, conn *pgx.Conn) error {
	const firstWait, maxWait = 10 * time.Millisecond, time.Second
	wait := firstWait
	for {
		var locked bool
		if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", int64(migrateLockKey)).Scan(&locked); err != nil {
			return err
		}
		if locked {
			return nil
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case <-timer.C:
		}
		wait = min(2*wait, maxWait)
	}
}
