package rebuild

import (
	"context"
	"fmt"
	"hash/fnv"
	"runtime"
	"sync"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore/eventrow"
)

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
	dataBuffer    = 256 << 10 // bytes of event data per shared buffer of a page
)

// foldRound is the bulk round's fast path: every event of one snapshot, in
// stream order, through the fold, its rows COPYed on every apply connection.
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
			w := newCopier(c, r.shadow) // uuids: pguuid (connect)
			for job := range copies {
				if ctx.Err() != nil {
					continue // drain
				}
				if err := w.copy(ctx, job); err != nil {
					cancel(fmt.Errorf("rebuild: copy into %s: %w", job.table, err))
					continue
				}
				r.rows.Add(int64(job.n))
				r.reportSometimes("replay")
			}
		})
	}
	folders := make([]*folder, max(runtime.NumCPU(), 2))
	feeds := make([]chan []*domain.Record, len(folders))
	var folding sync.WaitGroup
	for i := range folders {
		folders[i] = newFolder(r, copies)
		feeds[i] = make(chan []*domain.Record, 2)
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
		// The folders get pointers into the page (a record is some 300
		// bytes: copying each into its part and then into its stream's
		// list cost a fifth of the rebuild's allocations).
		parts := make([][]*domain.Record, len(folders))
		for i := range parts {
			parts[i] = make([]*domain.Record, 0, 2*len(page)/len(folders))
		}
		for j := range page {
			i := int(hashID(page[j].StreamID) % uint64(len(folders)))
			parts[i] = append(parts[i], &page[j])
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
		// The page's event data share a few large buffers instead of one
		// allocation each: the data is driver memory until the next row,
		// copied into the current buffer (a record keeps its slice, and so
		// the buffer, alive as long as it needs it).
		// Each row is scanned into its place in the page (a record of its
		// own escaped to the heap, an allocation an event).
		var data, streamType, typ pgtype.DriverBytes
		var buf []byte
		for rows.Next() {
			page = append(page, domain.Record{})
			rec := &page[len(page)-1]
			if err := rows.Scan((*[16]byte)(&rec.ID), (*[16]byte)(&rec.TenantID), &streamType, (*[16]byte)(&rec.StreamID),
				&rec.StreamVersion, &typ, &rec.SchemaVersion, &data, &rec.RecordedAt); err != nil {
				rows.Close()
				return fmt.Errorf("rebuild: read events: %w", err)
			}
			rec.StreamType, rec.Type = string(streamType), string(typ)
			if cap(buf)-len(buf) < len(data) {
				buf = make([]byte, 0, max(dataBuffer, len(data)))
			}
			start := len(buf)
			buf = append(buf, data...)
			rec.Data = buf[start:len(buf):len(buf)]
			rec.RecordedAt = rec.RecordedAt.UTC()
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

// catchUpRound replays, in one snapshot, the events after cur through the
// applier, and returns the new cursor.
func (r *rebuilder) catchUpRound(ctx context.Context, cur cursor) (cursor, error) {
	tx, err := r.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return cur, fmt.Errorf("rebuild: snapshot: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	next, err := r.replayAfter(ctx, tx, cur, r.newApplier(r.conns[0]))
	if err != nil {
		return cur, err
	}
	r.stats.Rounds++
	return next, nil
}

// replayAfter replays the events after cur that q's snapshot holds through
// a, and returns the snapshot's cursor.
func (r *rebuilder) replayAfter(ctx context.Context, q pgx.Tx, cur cursor, a *applier) (cursor, error) {
	var recs []domain.Record
	next, err := r.scan(ctx, q, cur, func(page []domain.Record) error {
		recs = append(recs, page...)
		return nil
	})
	if err != nil {
		return cur, err
	}
	return next, a.apply(ctx, q, recs)
}

// recordColumns are read by readPage, in this order: the seq, then an
// event as every reader of the events table reads one (eventrow).
var recordColumns = `seq, ` + eventrow.Columns

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
	)
	for rows.Next() {
		var r domain.Record
		dest, done := eventrow.Dest(&r)
		if err := rows.Scan(append([]any{&seq}, dest...)...); err != nil {
			return nil, 0, fmt.Errorf("rebuild: read events: %w", err)
		}
		if err := done(); err != nil {
			return nil, 0, fmt.Errorf("rebuild: %w", err)
		}
		recs = append(recs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("rebuild: read events: %w", err)
	}
	return recs, seq, nil
}
