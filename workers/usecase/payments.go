package usecase

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore"
	"github.com/ledger/ledger/workers/rails/payout"
)

// ExecutePayment runs a command on the payment aggregate through the event
// store, deciding on the payments row: it is the fold of the payment's
// events at its version (written in each append's transaction, and
// compared with the fold by ledgerctl audit verify), and reading it costs
// one row where folding costs every event.
func (l *Ledger) ExecutePayment(ctx context.Context, ref domain.StreamRef, meta domain.Metadata,
	decide func(domain.Payment) ([]domain.Event, error)) (domain.PaymentSnapshot, error) {
	return l.ExecutePaymentFrom(ctx, ref, domain.PaymentSnapshot{}, meta, decide)
}

// ExecutePaymentFrom is ExecutePayment deciding first on read, the payment
// as the caller has just read or written it (Version 0: not known), rather
// than reading its row again. A read that is no longer current costs
// nothing but a refused append: the append is made at read's version, and
// the command is then decided again on the row.
func (l *Ledger) ExecutePaymentFrom(ctx context.Context, ref domain.StreamRef, read domain.PaymentSnapshot, meta domain.Metadata,
	decide func(domain.Payment) ([]domain.Event, error)) (domain.PaymentSnapshot, error) {
	load := func(ctx context.Context) (eventstore.Snapshot[domain.Payment], error) {
		row := read
		var err error
		if row.Version == 0 {
			row, err = l.Payment(ctx, ref.TenantID, ref.ID)
		}
		read = domain.PaymentSnapshot{} // a retry decides on the row
		return eventstore.Snapshot[domain.Payment]{State: row.Payment, Version: row.Version, UpdatedAt: row.UpdatedAt}, err
	}
	var before domain.Payment // as the events were decided on
	var decided bool
	snap, err := eventstore.ExecuteFrom(ctx, l.store, ref, meta, load, domain.ApplyPayment,
		func(pay domain.Payment) ([]domain.Event, error) {
			events, err := decide(pay)
			before, decided = pay, len(events) > 0
			return events, err
		})
	if err == nil && decided && l.cfg.Appended != nil { // ledgerctl runs no workers to tell
		delivery, ready := snap.State.Status != before.Status && snap.State.WebhookURL != "",
			!before.AwaitsPayout() && snap.State.AwaitsPayout()
		eventstore.AfterCommit(ctx, func() { l.cfg.Appended(ref, delivery, ready) })
	}
	return paymentSnapshot(snap, err)
}

// AttachPaymentDocument records a supporting document, already stored, on
// its payment (POST /payments/{id}/document).
func (l *Ledger) AttachPaymentDocument(ctx context.Context, ref domain.StreamRef, doc domain.AttachPaymentDocument,
	meta domain.Metadata) (domain.PaymentSnapshot, error) {
	return l.ExecutePayment(ctx, ref, meta, func(p domain.Payment) ([]domain.Event, error) {
		doc.Now = time.Now()
		return domain.DecideAttachPaymentDocument(p, doc)
	})
}

// RecordSandboxDeposit records a deposit of amount (zero: what remains
// due when it is decided) on a sandbox payment, deciding first on read,
// the payment as the request read it (ExecutePaymentFrom), and then enters
// it in the sandbox rail's books under the reference the deposit carries,
// as a provider keeps its own record of the money it delivered. A momo
// push is paid from the phone it prompted, the payer's default momo number,
// as M-Pesa would report it; the other sandbox rails report no payer.
func (l *Ledger) RecordSandboxDeposit(ctx context.Context, ref domain.StreamRef, read domain.PaymentSnapshot, amount decimal.Decimal,
	meta domain.Metadata) (domain.PaymentSnapshot, error) {
	var payer *domain.Payer
	if read.Funding == domain.FundingMomo {
		u, err := l.User(ctx, ref.TenantID, read.UserID)
		if err != nil && domain.ErrorKind(err) != domain.NotFound { // a user gone since reports no payer
			return domain.PaymentSnapshot{}, err
		}
		payer = domain.MomoPayer(u.DefaultMomoPhone())
	}
	d := payout.SandboxDeposit{ID: uuid.Must(uuid.NewV7()), PaymentID: ref.ID}
	after, err := l.ExecutePaymentFrom(ctx, ref, read, meta, func(p domain.Payment) ([]domain.Event, error) {
		d.Amount, d.Rail, d.Currency, d.At = amount, p.Funding, p.DepositCurrency, time.Now()
		if d.Amount.IsZero() {
			d.Amount = p.Outstanding()
		}
		return domain.DecideDeposit(p, domain.RecordDeposit{Amount: d.Amount, Now: d.At, Ref: d.ID.String(), Payer: payer})
	})
	if err != nil || l.rails.SandboxDeposits == nil {
		return after, err
	}
	return after, l.rails.SandboxDeposits.RecordDeposit(ctx, d)
}

// PaymentAsOf folds a payment's events recorded at or before asOf;
// NotFound when it did not exist yet.
func (l *Ledger) PaymentAsOf(ctx context.Context, ref domain.StreamRef, asOf time.Time) (domain.PaymentSnapshot, error) {
	snap, err := eventstore.FoldAsOf(ctx, l.store, ref, asOf, domain.ApplyPayment)
	if err == nil && snap.Version == 0 {
		return domain.PaymentSnapshot{}, &domain.Error{Kind: domain.NotFound, Code: "not_found",
			Message: "the payment did not exist at asOf"}
	}
	return paymentSnapshot(snap, err)
}

func paymentSnapshot(snap eventstore.Snapshot[domain.Payment], err error) (domain.PaymentSnapshot, error) {
	if err != nil {
		return domain.PaymentSnapshot{}, err
	}
	return domain.PaymentSnapshot{Payment: snap.State, Version: snap.Version, UpdatedAt: snap.UpdatedAt}, nil
}

// ResolvePayout ends a transferring payment as an operator found its
// payout at the provider (domain.DecideResolvePayout); the caller records
// the same outcome on the payout rail's books first.
func (l *Ledger) ResolvePayout(ctx context.Context, ref domain.StreamRef, c domain.ResolvePayout, meta domain.Metadata) (domain.PaymentSnapshot, error) {
	return l.ExecutePayment(ctx, ref, meta, func(p domain.Payment) ([]domain.Event, error) {
		c.Now = time.Now()
		return domain.DecideResolvePayout(p, c)
	})
}

// ResolveChangeRefundPayout ends a payment's change refund its rail cannot
// account for, as an operator found it at the provider
// (domain.DecideResolveChangeRefundPayout); the caller records the same
// outcome on the payout rail's books first.
func (l *Ledger) ResolveChangeRefundPayout(ctx context.Context, ref domain.StreamRef, c domain.ResolvePayout,
	meta domain.Metadata) (domain.PaymentSnapshot, error) {
	return l.ExecutePayment(ctx, ref, meta, func(p domain.Payment) ([]domain.Event, error) {
		c.Now = time.Now()
		return domain.DecideResolveChangeRefundPayout(p, c)
	})
}

// ResolveChangeRefund records a payment's queued change refund as paid by
// hand by an operator (domain.DecideResolveChangeRefund), whoever's the
// payment is.
func (l *Ledger) ResolveChangeRefund(ctx context.Context, paymentID uuid.UUID, c domain.ResolveChangeRefund,
	meta domain.Metadata) (domain.PaymentSnapshot, error) {
	p, err := l.PaymentOfAnyTenant(ctx, paymentID)
	if err != nil {
		return domain.PaymentSnapshot{}, err
	}
	ref := domain.StreamRef{TenantID: p.TenantID, Type: "payment", ID: paymentID}
	return l.ExecutePaymentFrom(ctx, ref, p.PaymentSnapshot, meta, func(p domain.Payment) ([]domain.Event, error) {
		c.Now = time.Now()
		return domain.DecideResolveChangeRefund(p, c)
	})
}
