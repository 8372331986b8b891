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
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ledger/ledger/domain"
)

// ErrVersionConflict means another writer appended to the stream first.
var ErrVersionConflict = errors.New("eventstore: stream version conflict")

// Projector updates the read models for newly appended records, inside the
// append's transaction, so the next read sees the write.
type Projector interface {
	Project(ctx context.Context, tx pgx.Tx, recs []domain.Record) error
}

// Store appends and loads events.
type Store struct {
	pool      *pgxpool.Pool
	projector Projector
	now       func() time.Time
	appendDur prometheus.Histogram
}

// New returns a Store writing through pool and projecting with projector.
// Metrics are registered on reg when it is not nil.
func New(pool *pgxpool.Pool, projector Projector, reg prometheus.Registerer) *Store {
	s := &Store{pool: pool, projector: projector, now: time.Now,
		appendDur: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "ledger_append_duration_seconds", Help: "Time to append one batch of events, projection included.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14),
		})}
	if reg != nil {
		reg.MustRegister(s.appendDur)
	}
	return s
}

// Pool returns the store's connection pool.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Batch is a group of events for one stream, appended only if the stream is
// at Expected (0: the stream must not exist yet).
type Batch struct {
	Stream   domain.StreamRef
	Expected int
	Events   []domain.Event
}

// Append stores batches atomically, with their read-model updates, and
// returns the records written. Any batch whose stream has moved on makes the
// whole append fail with ErrVersionConflict and write nothing.
func (s *Store) Append(ctx context.Context, meta domain.Metadata, batches ...Batch) ([]domain.Record, error) {
	start := s.now()
	var recs []domain.Record
	for _, b := range batches {
		for i, e := range b.Events {
			id, err := uuid.NewV7()
			if err != nil {
				return nil, fmt.Errorf("event id: %w", err)
			}
			rec, err := domain.NewRecord(b.Stream, b.Expected+i+1, e, meta, id, start)
			if err != nil {
				return nil, err
			}
			recs = append(recs, rec)
		}
	}
	if len(recs) == 0 {
		return nil, nil
	}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		for _, b := range batches {
			if err := insertBatch(ctx, tx, b, recs); err != nil {
				return err
			}
		}
		return s.projector.Project(ctx, tx, recs)
	})
	if err != nil {
		return nil, err
	}
	s.appendDur.Observe(s.now().Sub(start).Seconds())
	return recs, nil
}

// insertEvents inserts one stream's records in a single statement, only if the
// stream's current version is the expected one. Racing writers that both pass
// the check collide on UNIQUE (stream_id, stream_version): Postgres makes the
// second wait for the first and then fails it with 23505, so exactly one wins
// and no stream ever has a gap or a duplicate version.
const insertEvents = `
INSERT INTO events (id, tenant_id, stream_type, stream_id, stream_version, type, schema_version, data, metadata, recorded_at)
SELECT r.id, $1, $2, $3, r.version, r.type, r.schema_version, r.data, r.metadata, $4
FROM unnest($5::uuid[], $6::int[], $7::text[], $8::int[], $9::jsonb[], $10::jsonb[])
     AS r(id, version, type, schema_version, data, metadata)
WHERE (SELECT coalesce(max(stream_version), 0) FROM events WHERE stream_id = $3) = $11`

func insertBatch(ctx context.Context, tx pgx.Tx, b Batch, all []domain.Record) error {
	var (
		ids, types      []string
		versions, schem []int
		datas, metas    []string
		recordedAt      time.Time
	)
	for _, r := range all {
		if r.StreamID != b.Stream.ID || r.StreamVersion <= b.Expected || r.StreamVersion > b.Expected+len(b.Events) {
			continue
		}
		meta, err := json.Marshal(r.Meta)
		if err != nil {
			return fmt.Errorf("encode metadata: %w", err)
		}
		ids, types = append(ids, r.ID.String()), append(types, r.Type)
		versions, schem = append(versions, r.StreamVersion), append(schem, r.SchemaVersion)
		datas, metas = append(datas, string(r.Data)), append(metas, string(meta))
		recordedAt = r.RecordedAt
	}
	tag, err := tx.Exec(ctx, insertEvents, b.Stream.TenantID, b.Stream.Type, b.Stream.ID, recordedAt,
		ids, versions, types, schem, datas, metas, b.Expected)
	if isUniqueViolation(err) {
		return ErrVersionConflict
	}
	if err != nil {
		return fmt.Errorf("insert %s events: %w", b.Stream.Type, err)
	}
	if tag.RowsAffected() != int64(len(ids)) {
		return ErrVersionConflict
	}
	return nil
}

func isUniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505"
}

// Load returns every record of a stream in version order. A stream of another
// tenant reads as empty.
func (s *Store) Load(ctx context.Context, stream domain.StreamRef) ([]domain.Record, error) {
	rows, err := s.querier(ctx).Query(ctx, `SELECT `+recordColumns+` FROM events
		WHERE stream_id = $1 AND tenant_id = $2 ORDER BY stream_version`, stream.ID, stream.TenantID)
	if err != nil {
		return nil, fmt.Errorf("load %s %s: %w", stream.Type, stream.ID, err)
	}
	return pgx.CollectRows(rows, scanRecord)
}

// recordColumns are read by scanRecord, in this order.
const recordColumns = `id, tenant_id, stream_type, stream_id, stream_version, type, schema_version,
	data, metadata, recorded_at, coalesce(position, 0), coalesce(hash, ''), coalesce(prevhash, '')`

func scanRecord(row pgx.CollectableRow) (domain.Record, error) {
	var r domain.Record
	var meta []byte
	err := row.Scan(&r.ID, &r.TenantID, &r.StreamType, &r.StreamID, &r.StreamVersion, &r.Type, &r.SchemaVersion,
		&r.Data, &meta, &r.RecordedAt, &r.Position, &r.Hash, &r.PrevHash)
	if err != nil {
		return r, fmt.Errorf("scan event: %w", err)
	}
	r.RecordedAt = r.RecordedAt.UTC()
	if err := json.Unmarshal(meta, &r.Meta); err != nil {
		return r, fmt.Errorf("decode metadata of %s: %w", r.ID, err)
	}
	return r, nil
}
