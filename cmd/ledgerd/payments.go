package main

import (
	"context"
	"time"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore"
	"github.com/ledger/ledger/projections"
)

// payments plugs the event store, the payments read model and the webhook
// delivery log into httpapi.Payments and workers.Payments.
type payments struct {
	*projections.Reader
	*projections.DeliveryLog
	store *eventstore.Store
	// appended is told of every command that appended to a payment's
	// stream (workers.Workers.Appended); nil: nobody.
	appended func(ref domain.StreamRef, newDelivery, readyForPayout bool)
}

// ExecutePayment runs a command on the payment aggregate through the event
// store, deciding on the payments row: it is the fold of the payment's
// events at its version (written in each append's transaction, and
// compared with the fold by ledgerctl audit verify), and reading it costs
// one row where folding costs every event.
func (p payments) ExecutePayment(ctx context.Context, ref domain.StreamRef, meta domain.Metadata,
	decide func(domain.Payment) ([]domain.Event, error)) (domain.PaymentSnapshot, error) {
	load := func(ctx context.Context) (eventstore.Snapshot[domain.Payment], error) {
		row, err := p.Payment(ctx, ref.TenantID, ref.ID)
		return eventstore.Snapshot[domain.Payment]{State: row.Payment, Version: row.Version, UpdatedAt: row.UpdatedAt}, err
	}
	var before domain.Payment // as the events were decided on
	var decided bool
	snap, err := eventstore.ExecuteFrom(ctx, p.store, ref, meta, load, domain.ApplyPayment,
		func(pay domain.Payment) ([]domain.Event, error) {
			events, err := decide(pay)
			before, decided = pay, len(events) > 0
			return events, err
		})
	if err == nil && decided && p.appended != nil {
		p.appended(ref, snap.State.Status != before.Status && snap.State.WebhookURL != "",
			!before.AwaitsPayout() && snap.State.AwaitsPayout())
	}
	return paymentSnapshot(snap, err)
}

// CreatePayment appends a new payment's first events through the event store.
func (p payments) CreatePayment(ctx context.Context, ref domain.StreamRef, meta domain.Metadata,
	decide func(domain.Payment) ([]domain.Event, error)) (domain.PaymentSnapshot, error) {
	snap, err := eventstore.CreateSnapshot(ctx, p.store, ref, meta, domain.ApplyPayment, decide)
	if err == nil && snap.Version > 0 && p.appended != nil {
		p.appended(ref, snap.State.WebhookURL != "", snap.State.AwaitsPayout())
	}
	return paymentSnapshot(snap, err)
}

func paymentSnapshot(snap eventstore.Snapshot[domain.Payment], err error) (domain.PaymentSnapshot, error) {
	if err != nil {
		return domain.PaymentSnapshot{}, err
	}
	return domain.PaymentSnapshot{Payment: snap.State, Version: snap.Version, UpdatedAt: snap.UpdatedAt}, nil
}

// events plugs the event store's history reads into httpapi.Events.
type events struct{ *eventstore.Store }

// PaymentAsOf folds a payment's events recorded at or before asOf.
func (e events) PaymentAsOf(ctx context.Context, ref domain.StreamRef, asOf time.Time) (domain.PaymentSnapshot, error) {
	snap, err := eventstore.FoldAsOf(ctx, e.Store, ref, asOf, domain.ApplyPayment)
	if err != nil {
		return domain.PaymentSnapshot{}, err
	}
	if snap.Version == 0 {
		return domain.PaymentSnapshot{}, &domain.Error{Kind: domain.NotFound, Code: "not_found",
			Message: "the payment did not exist at asOf"}
	}
	return domain.PaymentSnapshot{Payment: snap.State, Version: snap.Version, UpdatedAt: snap.UpdatedAt}, nil
}
