package rebuild

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// finishShadow makes the shadow tables what the live ones are: logged,
// keyed, indexed, with their foreign keys and statistics, and replays the
// streams the fold handed over once the keys are there. The foreign keys
// come after every index.
//
// The keys, indexes and ANALYZEs are steps dealt out to whichever apply
// connection is free, each after the steps it needs: a table's indexes
// after its keys (adding a key locks the table whole), its ANALYZE after
// its indexes (ANALYZE waits for any index build on its table anyway).
// Every table's keys come first, the largest tables' first, then the
// indexes, then the ANALYZEs: the keys gate the rest, and two indexes of
// one table build at once (CREATE INDEX takes a SHARE lock, which another
// CREATE INDEX shares). A table's steps had been one job on one
// connection: the payments' key, six indexes and ANALYZE outlasted all the
// other tables' steps together while the other connection idled. Dealt
// out step by step, the phase ends close to half the steps' total
// (figures: docs/performance.md, Replay).
func (r *rebuilder) finishShadow(ctx context.Context) error {
	var keySteps, indexSteps, analyzeSteps []*finishStep
	var fks []func(context.Context, *pgx.Conn) error
	sizes, err := r.shadowSizes(ctx)
	if err != nil {
		return err
	}
	defs := slices.Clone(r.defs)
	slices.SortStableFunc(defs, func(a, b tableDef) int { return cmp.Compare(sizes[b.name], sizes[a.name]) })
	for _, d := range defs {
		t := qualified(r.shadow, d.name)
		var keys *finishStep
		if stmts := r.keyStatements(d); len(stmts) > 0 {
			keys = newFinishStep(strings.Join(stmts, "; "))
			keySteps = append(keySteps, keys)
		}
		analyze := newFinishStep(`ANALYZE ` + t)
		for _, ix := range d.indexes {
			index := newFinishStep(ix[1])
			keys.then(index)
			index.then(analyze)
			indexSteps = append(indexSteps, index)
		}
		keys.then(analyze)
		analyzeSteps = append(analyzeSteps, analyze)
		for _, fk := range d.fks {
			add := `ALTER TABLE ` + t + ` ADD CONSTRAINT ` + ident(fk[0]) + ` ` + fk[1] + ` NOT VALID`
			validate := `ALTER TABLE ` + t + ` VALIDATE CONSTRAINT ` + ident(fk[0])
			// Added NOT VALID in a transaction of its own, stepping aside
			// from the uploads (the ADD takes a SHARE ROW EXCLUSIVE lock on
			// documents); the rows are checked after its commit, under a
			// ROW SHARE lock, which uploads pass.
			fks = append(fks, func(ctx context.Context, c *pgx.Conn) error {
				if err := execSteppingAside(ctx, c, add, 0, 50*time.Millisecond); err != nil {
					return fmt.Errorf("rebuild: %s: %w", add, err)
				}
				if _, err := c.Exec(ctx, validate); err != nil {
					return fmt.Errorf("rebuild: %s: %w", validate, err)
				}
				return nil
			})
		}
	}
	if err := runFinishSteps(ctx, r.conns, slices.Concat(keySteps, indexSteps, analyzeSteps)); err != nil {
		return err
	}
	return r.onEveryConnDo(ctx, fks)
}

// finishStep is a statement of finishShadow and the steps waiting for it.
type finishStep struct {
	sql     string
	waiting int           // steps still to finish before this one starts
	next    []*finishStep // steps waiting for this one
}

func newFinishStep(sql string) *finishStep { return &finishStep{sql: sql} }

// then makes next wait for s; a nil s is a step already done.
func (s *finishStep) then(next *finishStep) {
	if s == nil {
		return
	}
	s.next = append(s.next, next)
	next.waiting++
}

// runFinishSteps runs the steps on the connections, each step on whichever
// connection is free once the steps it waits for are done, the earliest in
// the list first. The first error stops the others from starting.
func runFinishSteps(ctx context.Context, conns []*pgx.Conn, steps []*finishStep) error {
	order := make(map[*finishStep]int, len(steps))
	var ready []*finishStep
	for i, s := range steps {
		order[s] = i
		if s.waiting == 0 {
			ready = append(ready, s)
		}
	}
	var (
		mu      sync.Mutex
		changed = sync.NewCond(&mu)
		left    = len(steps)
		failed  error
	)
	// take waits for a step to be ready and returns the earliest one, or
	// nil once every step is done or one failed.
	take := func() *finishStep {
		mu.Lock()
		defer mu.Unlock()
		for len(ready) == 0 && left > 0 && failed == nil {
			changed.Wait()
		}
		if len(ready) == 0 || failed != nil {
			return nil
		}
		i := 0
		for j, s := range ready {
			if order[s] < order[ready[i]] {
				i = j
			}
		}
		s := ready[i]
		ready = slices.Delete(ready, i, i+1)
		return s
	}
	done := func(s *finishStep, err error) {
		mu.Lock()
		defer mu.Unlock()
		defer changed.Broadcast()
		left--
		if err != nil {
			failed = cmp.Or(failed, err)
			return
		}
		for _, n := range s.next {
			if n.waiting--; n.waiting == 0 {
				ready = append(ready, n)
			}
		}
	}
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(func() {
			for s := take(); s != nil; s = take() {
				var err error
				if _, err = c.Exec(ctx, s.sql); err != nil {
					err = fmt.Errorf("rebuild: %s: %w", s.sql, err)
				}
				done(s, err)
			}
		})
	}
	wg.Wait()
	return failed
}

// shadowSizes returns the shadow tables' sizes in bytes, by name.
func (r *rebuilder) shadowSizes(ctx context.Context) (map[string]int64, error) {
	rows, err := r.conns[0].Query(ctx, `SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c
		WHERE c.relnamespace = $1::regnamespace AND c.relkind = 'r'`, r.shadow)
	if err != nil {
		return nil, fmt.Errorf("rebuild: shadow sizes: %w", err)
	}
	sizes := map[string]int64{}
	var name string
	var size int64
	_, err = pgx.ForEachRow(rows, []any{&name, &size}, func() error { sizes[name] = size; return nil })
	if err != nil {
		return nil, fmt.Errorf("rebuild: shadow sizes: %w", err)
	}
	return sizes, nil
}
