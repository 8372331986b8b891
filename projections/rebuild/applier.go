package rebuild

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/projections"
)

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
		if err := (projections.Projector{}).Project(a.batch, []domain.Record{rec}); err != nil {
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
