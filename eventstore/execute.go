package eventstore

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/ledger/ledger/domain"
)

// Snapshot is a stream's state with the facts of the stream itself.
type Snapshot[S any] struct {
	State        S
	Version      int
	FirstEventID uuid.UUID // the id of the stream's first event
	CreatedAt    time.Time // when the first event was recorded
	UpdatedAt    time.Time // when the last event was recorded
}

// Execute loads a stream, folds it into state with apply, asks decide for new
// events, and appends them at the version it loaded. When another writer got
// there first it retries once from fresh state, then gives up with a 409
// (contract: "retries the command once, then answers 409"). It returns the
// state after the new events, so callers never wait on a projection.
func Execute[S any](ctx context.Context, s *Store, stream domain.StreamRef, meta domain.Metadata,
	apply func(S, domain.Event) S, decide func(S) ([]domain.Event, error)) (S, error) {
	snap, err := ExecuteSnapshot(ctx, s, stream, meta, apply, decide)
	return snap.State, err
}

// ExecuteSnapshot is Execute returning the stream's snapshot after the new events.
func ExecuteSnapshot[S any](ctx context.Context, s *Store, stream domain.StreamRef, meta domain.Metadata,
	apply func(S, domain.Event) S, decide func(S) ([]domain.Event, error)) (Snapshot[S], error) {
	load := func(ctx context.Context) (Snapshot[S], error) { return FoldSnapshot(ctx, s, stream, apply) }
	return ExecuteFrom(ctx, s, stream, meta, load, apply, decide)
}

// ExecuteFrom is ExecuteSnapshot deciding on the snapshot load reads
// instead of folding the whole stream: a read model written in the append's
// own transaction (projections/) holds the stream's state at its version,
// so reading that one row costs the same however long the stream has grown.
// A stale snapshot cannot slip through: the append is made at the version
// load returned, and refused (then retried once from a fresh load) when the
// stream has moved on.
func ExecuteFrom[S any](ctx context.Context, s *Store, stream domain.StreamRef, meta domain.Metadata,
	load func(context.Context) (Snapshot[S], error), apply func(S, domain.Event) S,
	decide func(S) ([]domain.Event, error)) (Snapshot[S], error) {
	unlock, err := s.streams.lock(ctx, stream.ID)
	if err != nil {
		return Snapshot[S]{}, err
	}
	defer unlock()
	for attempt := 0; ; attempt++ {
		snap, err := load(ctx)
		if err != nil {
			return Snapshot[S]{}, err
		}
		events, err := decide(snap.State)
		if err != nil || len(events) == 0 {
			return snap, err
		}
		recs, err := s.Append(ctx, meta, Batch{Stream: stream, Expected: snap.Version, Events: events, State: snap.State})
		if errors.Is(err, ErrVersionConflict) && attempt == 0 {
			continue
		}
		if errors.Is(err, ErrVersionConflict) {
			return Snapshot[S]{}, errConcurrentUpdate(err)
		}
		if err != nil {
			return Snapshot[S]{}, err
		}
		for i, e := range events {
			snap = snap.add(apply, recs[i], e)
		}
		return snap, nil
	}
}

// errConcurrentUpdate is the 409 of a command that lost its stream to
// another writer twice (ExecuteFrom, Idempotency.Do): a retry decides on
// fresh state, so it is transient.
func errConcurrentUpdate(err error) error {
	return &domain.Error{Kind: domain.Conflict, Code: "concurrent_update",
		Message: "the resource was changed by another request; retry", Err: err, Transient: true}
}

// Fold loads a stream and folds it into state, returning the stream's version.
func Fold[S any](ctx context.Context, s *Store, stream domain.StreamRef, apply func(S, domain.Event) S) (S, int, error) {
	snap, err := FoldSnapshot(ctx, s, stream, apply)
	return snap.State, snap.Version, err
}

// FoldSnapshot loads a stream and folds it into its snapshot.
func FoldSnapshot[S any](ctx context.Context, s *Store, stream domain.StreamRef, apply func(S, domain.Event) S) (Snapshot[S], error) {
	recs, err := s.Load(ctx, stream)
	if err != nil {
		return Snapshot[S]{}, err
	}
	return foldRecords(recs, apply)
}

// foldRecords folds a stream's records, in order, into its snapshot.
func foldRecords[S any](recs []domain.Record, apply func(S, domain.Event) S) (Snapshot[S], error) {
	var snap Snapshot[S]
	for _, r := range recs {
		e, err := r.Decode()
		if err != nil {
			return snap, err
		}
		snap = snap.add(apply, r, e)
	}
	return snap, nil
}

func (snap Snapshot[S]) add(apply func(S, domain.Event) S, r domain.Record, e domain.Event) Snapshot[S] {
	if snap.Version == 0 {
		snap.FirstEventID, snap.CreatedAt = r.ID, r.RecordedAt
	}
	snap.State, snap.Version, snap.UpdatedAt = apply(snap.State, e), r.StreamVersion, r.RecordedAt
	return snap
}

// CreateSnapshot is ExecuteSnapshot for a stream the caller has just
// named with a fresh UUIDv7: it decides on the empty state and appends at
// version 0 without loading the stream first, saving a round trip on every
// create. Should the stream exist after all, the append's version check
// refuses it and the caller gets a 409, never a second first event.
func CreateSnapshot[S any](ctx context.Context, s *Store, stream domain.StreamRef, meta domain.Metadata,
	apply func(S, domain.Event) S, decide func(S) ([]domain.Event, error)) (Snapshot[S], error) {
	var snap Snapshot[S]
	events, err := decide(snap.State)
	if err != nil || len(events) == 0 {
		return snap, err
	}
	recs, err := s.Append(ctx, meta, Batch{Stream: stream, Expected: 0, Events: events})
	if errors.Is(err, ErrVersionConflict) {
		return Snapshot[S]{}, &domain.Error{Kind: domain.Conflict, Code: "concurrent_update",
			Message: "the resource already exists; retry with a new request", Err: err}
	}
	if err != nil {
		return Snapshot[S]{}, err
	}
	for i, e := range events {
		snap = snap.add(apply, recs[i], e)
	}
	return snap, nil
}
