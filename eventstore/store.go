// Package eventstore keeps the ledger's events in Postgres: appends with
// optimistic concurrency, inline read-model projection in the same
// transaction, a single sequencer that gives committed events their global
// position and hash chain, and the relay that publishes them to JetStream.
package eventstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore/eventrow"
)

// ErrVersionConflict means another writer appended to the stream first.
var ErrVersionConflict = errors.New("eventstore: stream version conflict")

// Projector updates the read models for newly appended records, in the
// append's transaction, so the next read sees the write.
//
// Project is given one stream's new records and the stream's state before
// them (Batch.State), and only queues statements on b: Append sends them in the same
// pipeline as the events' insert, after it, in one round trip, and reads
// nothing back but their errors. Any error (the stream's version check
// included) aborts the whole pipeline, so a read-model statement must never
// need another statement's result. Project's own error (an event it cannot
// decode) stops the append before anything is sent.
type Projector interface {
	Project(b *pgx.Batch, before any, recs []domain.Record) error
}

// Store appends and loads events.
type Store struct {
	pool      *pgxpool.Pool
	projector Projector
	now       func() time.Time
	appendDur prometheus.Histogram
	committed func()       // OnCommit's
	streams   *streamLocks // one writer per stream in this process (stream_locks.go)
	group     *groupCommit // appends outside a request's transaction (group_commit.go)
}

// OnCommit has f called after every commit of appended events (a keyed
// request's with its key's record). ledgerd wires it to Relay.Wake. Set it
// before appending.
func (s *Store) OnCommit(f func()) { s.committed = f }

func (s *Store) appendCommitted() {
	if s.committed != nil {
		s.committed()
	}
}

// New returns a Store writing through pool and projecting with projector.
// Metrics are registered on reg when it is not nil.
func New(pool *pgxpool.Pool, projector Projector, reg prometheus.Registerer) *Store {
	s := &Store{pool: pool, projector: projector, now: time.Now, streams: newStreamLocks(), group: newGroupCommit(pool),
		appendDur: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "ledger_append_duration_seconds", Help: "Time to append one batch of events, projection included.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14),
		})}
	if reg != nil {
		reg.MustRegister(s.appendDur, s.group.sizes)
	}
	return s
}

// Pool returns the store's connection pool.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Batch is a group of events for one stream, appended only if the stream is
// at Expected (0: the stream must not exist yet). State is the stream's
// state at Expected, as the events were decided on (nil for a new stream):
// the projector folds the events into it and writes the result as the
// stream's read-model row.
type Batch struct {
	Stream   domain.StreamRef
	Expected int
	Events   []domain.Event
	State    any
}

// Append stores batches atomically, with their read-model updates, and
// returns the records written. Any batch whose stream has moved on makes the
// whole append fail with ErrVersionConflict and write nothing.
//
// In a request that carries an Idempotency-Key (Idempotency.Do), the append
// is held and returns its records at once; it commits, or is refused, with
// the request's key (request_appends.go).
func (s *Store) Append(ctx context.Context, meta domain.Metadata, batches ...Batch) ([]domain.Record, error) {
	start := s.now()
	recs, b, appends, err := s.prepareAppend(meta, start, batches)
	if err != nil || len(recs) == 0 {
		return nil, err
	}
	if r := requestAppendsOf(ctx); r != nil {
		r.hold(b, appends, recs[0].StreamID)
		return recs, nil
	}
	if err := s.group.commit(newPendingAppend(ctx, b.QueuedQueries, appends, recs[0].StreamID)); err != nil {
		return nil, err
	}
	s.appendCommitted()
	s.appendDur.Observe(s.now().Sub(start).Seconds())
	return recs, nil
}

// prepareAppend returns the records of batches, recorded at, and the
// pipeline that appends them: its first appends statements insert the
// events, the projection's follow.
func (s *Store) prepareAppend(meta domain.Metadata, at time.Time, batches []Batch) ([]domain.Record, *pgx.Batch, int, error) {
	var recs []domain.Record
	for _, b := range batches {
		for i, e := range b.Events {
			id, err := uuid.NewV7()
			if err != nil {
				return nil, nil, 0, fmt.Errorf("event id: %w", err)
			}
			rec, err := domain.NewRecord(b.Stream, b.Expected+i+1, e, meta, id, at)
			if err != nil {
				return nil, nil, 0, err
			}
			recs = append(recs, rec)
		}
	}
	if len(recs) == 0 {
		return nil, nil, 0, nil
	}
	b := &pgx.Batch{}
	for _, bt := range batches {
		if len(bt.Events) == 0 {
			continue
		}
		if err := queueBatch(b, bt, recs); err != nil {
			return nil, nil, 0, err
		}
	}
	appends := b.Len()
	next := 0
	for _, bt := range batches {
		if err := s.projector.Project(b, bt.State, recs[next:next+len(bt.Events)]); err != nil {
			return nil, nil, 0, err
		}
		next += len(bt.Events)
	}
	return recs, b, appends, nil
}

// commitRequest commits a keyed request's held appends with record, the
// key's own statement, through the group commit, then runs what waited
// for them (AfterCommit). A request that appended nothing (a token's)
// wakes no relay.
func (s *Store) commitRequest(ctx context.Context, r *requestAppends, record *pgx.QueuedQuery) error {
	p := r.pending(ctx, record)
	if err := s.group.commit(p); err != nil {
		return err
	}
	if p.appends > 0 {
		s.appendCommitted()
	}
	r.committed()
	return nil
}

// readResults reads the results of b in order and returns the first error:
// ErrVersionConflict when an event insert found its stream behind the
// expected version (isStaleVersion) or past it, or lost a race to another
// writer (23505); errKeyTaken when a request's Idempotency-Key was recorded
// by another; or the statement's error.
// Close's error is returned too: in a pipeline the implicit transaction
// commits after the last statement, and only Close sees that.
func readResults(br pgx.BatchResults, b *pgx.Batch, appends int) error {
	var first error
	for i := range b.Len() {
		_, err := br.Exec()
		if err == nil {
			continue
		}
		switch {
		case isKeyTaken(err):
			first = errKeyTaken
		case i < appends && (isUniqueViolation(err) || isStaleVersion(err)):
			first = ErrVersionConflict
		case isUniqueViolation(err):
			// A read model's unique key (a user's email in a tenant) taken
			// by a concurrent append: the same race as a stream version's,
			// answered the same way, so the caller retries from fresh state.
			first = fmt.Errorf("%w: project (%s): %w", ErrVersionConflict, statementName(b.QueuedQueries[i].SQL), err)
		case i < appends:
			first = fmt.Errorf("insert events: %w", err)
		default:
			first = fmt.Errorf("project (%s): %w", statementName(b.QueuedQueries[i].SQL), err)
		}
		break
	}
	if err := br.Close(); first == nil && err != nil {
		first = fmt.Errorf("append: %w", err)
	}
	return first
}

// statementName is the first words of a statement, to say which one failed.
func statementName(sql string) string {
	f := strings.Fields(sql)
	return strings.Join(f[:min(len(f), 3)], " ")
}

// appendEvents inserts one stream's records in a single statement, only if
// the stream's current version is the expected one. The stream is at $4
// exactly when version $4 exists (or $4 is 0) and version $4 + 1 does not:
//   - a stream behind $4 makes every row's version 0, which the table's
//     CHECK (stream_version > 0) refuses (23514, isStaleVersion);
//   - a stream past $4 already has the first row's version, which UNIQUE
//     (stream_id, stream_version) refuses (23505).
//
// Either failure aborts the whole pipeline. Racing writers that both find
// $4 collide on that index: Postgres makes the second wait for the first
// and then fails it with 23505, so exactly one wins and no stream ever has
// a gap or a duplicate version. The check is a point lookup of that index,
// evaluated once per statement. This is plain SQL rather than a plpgsql
// function doing the same: the function call and its inner statements
// are extra work on every append (docs/performance.md, "Append").
const appendEvents = `INSERT INTO events (id, tenant_id, stream_type, stream_id, stream_version, type, schema_version, data, metadata, recorded_at)
	SELECT r.id, $1, $2, $3,
		CASE WHEN $4::integer = 0 OR EXISTS (SELECT 1 FROM events WHERE stream_id = $3 AND stream_version = $4::integer)
			THEN r.version ELSE 0 END,
		r.type, r.schema_version, r.data, r.metadata, $5
	FROM unnest($6::uuid[], $7::int[], $8::text[], $9::int[], $10::json[], $11::json[])
		AS r(id, version, type, schema_version, data, metadata)`

// appendEvent is appendEvents for a batch of one event, with scalar
// parameters: most appends are one event, and without the arrays and
// unnest each costs Postgres less to bind, plan and run.
const appendEvent = `INSERT INTO events (id, tenant_id, stream_type, stream_id, stream_version, type, schema_version, data, metadata, recorded_at)
	VALUES ($6, $1, $2, $3,
		CASE WHEN $4::integer = 0 OR EXISTS (SELECT 1 FROM events WHERE stream_id = $3 AND stream_version = $4::integer)
			THEN $7::integer ELSE 0 END,
		$8, $9, $10::json, $11::json, $5)`

// queueBatch queues the event insert (appendEvents) of one batch.
func queueBatch(q *pgx.Batch, b Batch, all []domain.Record) error {
	var c eventColumns
	var recordedAt time.Time
	for _, r := range all {
		if r.StreamID != b.Stream.ID || r.StreamVersion <= b.Expected || r.StreamVersion > b.Expected+len(b.Events) {
			continue
		}
		if err := c.add(r); err != nil {
			return err
		}
		recordedAt = r.RecordedAt
	}
	if len(c.ids) == 1 {
		q.Queue(appendEvent, b.Stream.TenantID, b.Stream.Type, b.Stream.ID, b.Expected, recordedAt,
			c.ids[0], c.versions[0], c.types[0], c.schemas[0], c.datas[0], c.metas[0])
		return nil
	}
	q.Queue(appendEvents, b.Stream.TenantID, b.Stream.Type, b.Stream.ID, b.Expected, recordedAt,
		c.ids, c.versions, c.types, c.schemas, c.datas, c.metas)
	return nil
}

// eventColumns are records as the array arguments of appendEvents and
// appendEventsAtHead, one element per record.
type eventColumns struct {
	ids                 []uuid.UUID
	types, datas, metas []string
	versions, schemas   []int
}

func (c *eventColumns) add(r domain.Record) error {
	meta, err := json.Marshal(r.Meta)
	if err != nil {
		return fmt.Errorf("encode metadata: %w", err)
	}
	c.ids, c.types = append(c.ids, r.ID), append(c.types, r.Type)
	c.versions, c.schemas = append(c.versions, r.StreamVersion), append(c.schemas, r.SchemaVersion)
	c.datas, c.metas = append(c.datas, string(r.Data)), append(c.metas, string(meta))
	return nil
}

func isUniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505"
}

// isStaleVersion reports appendEvents' refusal of a stream that is behind
// the expected version (its rows' version 0 fails the table's CHECK).
func isStaleVersion(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23514" && pgErr.ConstraintName == "events_stream_version_check"
}

// Load returns every record of a stream in version order. A stream of another
// tenant reads as empty.
func (s *Store) Load(ctx context.Context, stream domain.StreamRef) ([]domain.Record, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+recordColumns+` FROM events
		WHERE stream_id = $1 AND tenant_id = $2 ORDER BY stream_version`, stream.ID, stream.TenantID)
	if err != nil {
		return nil, fmt.Errorf("load %s %s: %w", stream.Type, stream.ID, err)
	}
	return pgx.CollectRows(rows, eventrow.Scan)
}

// recordColumns are read by eventrow.Scan, in this order: every reader of
// the events table reads an event the same way.
var recordColumns = eventrow.Columns
