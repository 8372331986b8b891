package rebuild

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Verified is what Verify found.
type Verified struct {
	Stats                    // the replay's; Tables holds the live rows compared
	Differences int64        // rows missing, unexpected or different, all tables
	First       []Difference // the first few, table by table in key order
}

// Difference is a read-model row on which the replay of the events and the
// live table disagree.
type Difference struct {
	Table string
	Key   string // the primary key's values, "/" between them
	Kind  string // "missing" (replayed, not live), "unexpected" (live, not replayed) or "different"
	// The columns that differ (a missing or unexpected row's all), each as
	// JSON, as replayed and as live.
	Expected, Actual map[string]json.RawMessage
}

// Verify is a rebuild of every read model without the swap: the streams
// folded into shadow tables as RunWith folds them, caught up, and then, in
// one snapshot, the events since replayed into them and each shadow table
// compared with its live table in SQL, so memory does not grow with the
// tables. No live table is locked or written; the shadow tables are
// dropped. It lists at most keep differences.
func Verify(ctx context.Context, pool *pgxpool.Pool, opt Options, keep int) (Verified, error) {
	r, err := newRebuilder(pool, "all", opt)
	if err != nil {
		return Verified{}, err
	}
	var v Verified
	err = r.build(ctx, func(cur cursor) error {
		if err := r.catchUp(ctx, &cur); err != nil {
			return err
		}
		r.report("compare")
		return r.compare(ctx, cur, keep, &v)
	})
	v.Stats = r.stats
	v.Events, v.Statements, v.Rows = r.events.Load(), r.stmts.Load(), r.rows.Load()
	v.Total = time.Since(r.start)
	return v, err
}

// compare replays the events after cur and compares the shadow tables with
// the live ones, all in one REPEATABLE READ transaction that it rolls back:
// the live rows are those of the events the replay read.
func (r *rebuilder) compare(ctx context.Context, cur cursor, keep int, v *Verified) error {
	c := r.conns[0]
	tx, err := c.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
	if err != nil {
		return fmt.Errorf("rebuild: verify: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if _, err := r.replayAfter(ctx, tx, cur, r.newApplier(c)); err != nil {
		return err
	}
	r.stats.Rounds++
	r.stats.Tables = map[string]int64{}
	for _, name := range r.tables {
		var n int64
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM `+qualified("public", name)).Scan(&n); err != nil {
			return fmt.Errorf("rebuild: verify %s: %w", name, err)
		}
		r.stats.Tables[name] = n
		rows, err := tx.Query(ctx, r.compareSQL(name), max(keep-len(v.First), 1))
		if err != nil {
			return fmt.Errorf("rebuild: verify %s: %w", name, err)
		}
		var total int64
		d := Difference{Table: name}
		_, err = pgx.ForEachRow(rows, []any{&total, &d.Key, &d.Kind, &d.Expected, &d.Actual}, func() error {
			if len(v.First) < keep {
				v.First = append(v.First, d)
			}
			d.Expected, d.Actual = nil, nil // scanned anew, not into the kept maps
			return nil
		})
		if err != nil {
			return fmt.Errorf("rebuild: verify %s: %w", name, err)
		}
		v.Differences += total
	}
	return nil
}

// compareSQL compares a shadow table with its live table: the rows of
// each, as the text of to_jsonb (json columns have no equality; jsonb's
// text orders an object's keys and keeps a number's written scale), in one
// and not the other (EXCEPT ALL both ways) paired by primary key. It
// returns the number of differences with each of the first $1 (one at least, for the number): its key,
// kind, and the differing columns as replayed and as live.
func (r *rebuilder) compareSQL(name string) string {
	t := tables[name]
	var on, key []string
	for _, k := range t.Columns[:t.Key] {
		on = append(on, fmt.Sprintf(`e.j->'%s' = a.j->'%s'`, k, k))
		key = append(key, fmt.Sprintf(`coalesce(e.j, a.j)->>'%s'`, k))
	}
	rows := func(schema string) string {
		return `SELECT to_jsonb(x)::text AS j FROM ` + qualified(schema, name) + ` x`
	}
	// only is the columns of row, those that differ from other's.
	only := func(row, other string) string {
		return `(SELECT coalesce(jsonb_object_agg(c.key, c.value), '{}') FROM jsonb_each(` + row + `.j) c
			WHERE ` + other + `.j IS NULL OR (` + other + `.j->c.key)::text IS DISTINCT FROM c.value::text)`
	}
	return `WITH replayed AS (` + rows(r.shadow) + `), live AS (` + rows("public") + `),
		missing AS (SELECT j::jsonb FROM (SELECT j FROM replayed EXCEPT ALL SELECT j FROM live) d),
		unexpected AS (SELECT j::jsonb FROM (SELECT j FROM live EXCEPT ALL SELECT j FROM replayed) d)
	SELECT count(*) OVER (), concat_ws('/', ` + strings.Join(key, ", ") + `) AS key,
		CASE WHEN a.j IS NULL THEN 'missing' WHEN e.j IS NULL THEN 'unexpected' ELSE 'different' END,
		` + only("e", "a") + `, ` + only("a", "e") + `
	FROM missing e FULL JOIN unexpected a ON ` + strings.Join(on, " AND ") + `
	ORDER BY key LIMIT $1`
}
