package eventstore

import (
	"context"
	"errors"

	"github.com/ledger/ledger/domain"
)

// Execute loads a stream, folds it into state with apply, asks decide for new
// events, and appends them at the version it loaded. When another writer got
// there first it retries once from fresh state, then gives up with a 409
// (contract: "retries the command once, then answers 409"). It returns the
// state after the new events, so callers never wait on a projection.
func Execute[S any](ctx context.Context, s *Store, stream domain.StreamRef, meta domain.Metadata,
	apply func(S, domain.Event) S, decide func(S) ([]domain.Event, error)) (S, error) {
	var zero S
	for attempt := 0; ; attempt++ {
		state, version, err := Fold(ctx, s, stream, apply)
		if err != nil {
			return zero, err
		}
		events, err := decide(state)
		if err != nil || len(events) == 0 {
			return state, err
		}
		_, err = s.Append(ctx, meta, Batch{Stream: stream, Expected: version, Events: events})
		if errors.Is(err, ErrVersionConflict) && attempt == 0 {
			continue
		}
		if errors.Is(err, ErrVersionConflict) {
			return zero, &domain.Error{Kind: domain.Conflict, Code: "concurrent_update",
				Message: "the resource was changed by another request; retry", Err: err}
		}
		if err != nil {
			return zero, err
		}
		for _, e := range events {
			state = apply(state, e)
		}
		return state, nil
	}
}

// Fold loads a stream and folds it into state, returning the stream's version.
func Fold[S any](ctx context.Context, s *Store, stream domain.StreamRef, apply func(S, domain.Event) S) (S, int, error) {
	var state S
	recs, err := s.Load(ctx, stream)
	if err != nil {
		return state, 0, err
	}
	for _, r := range recs {
		e, err := r.Decode()
		if err != nil {
			return state, 0, err
		}
		state = apply(state, e)
	}
	return state, len(recs), nil
}
