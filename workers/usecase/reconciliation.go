package usecase

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore"
)

// breakStream is the stream type of a reconciliation break.
const breakStream = "reconciliation"

// breakRef names the stream of break id, in the operator's books.
func breakRef(id uuid.UUID) domain.StreamRef {
	return domain.StreamRef{TenantID: domain.OperatorBooks, Type: breakStream, ID: id}
}

// FindBreak records the break a reconciliation found, unless it was found
// before: its stream's id comes from its rail, kind and reference, so two
// runs of one window (even at once: the second append loses and, retried,
// finds the break) record it once. isNew says whether this call did.
func (l *Ledger) FindBreak(ctx context.Context, f domain.FindBreak, meta domain.Metadata) (domain.Break, bool, error) {
	var isNew bool
	b, err := eventstore.Execute(ctx, l.store, breakRef(domain.BreakID(f.Rail, f.Kind, f.Ref)), meta, domain.ApplyBreak,
		func(b domain.Break) ([]domain.Event, error) {
			events, err := domain.DecideFindBreak(b, f)
			isNew = len(events) > 0
			return events, err
		})
	return b, isNew, err
}

// ResolveBreak closes an open break with the operator's reason; by names
// the operator.
func (l *Ledger) ResolveBreak(ctx context.Context, id uuid.UUID, reason, by string, meta domain.Metadata) (domain.Break, error) {
	return eventstore.Execute(ctx, l.store, breakRef(id), meta, domain.ApplyBreak, func(b domain.Break) ([]domain.Event, error) {
		return domain.DecideResolveBreak(b, domain.ResolveBreak{Reason: reason, By: by, Now: time.Now()})
	})
}
