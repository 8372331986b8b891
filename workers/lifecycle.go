package workers

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/workers/rails/payout"
)

// lifecycle is the durable consumer that moves funded payments on: a
// deposit (or the document a held payment waited for) converts the
// payment and records its payout intent; the intent calls the payout rail
// with the payment id as idempotency key and records the rail's answer.
// Each step is decided on the payment's current state, so a redelivered
// or duplicated message decides nothing new, and the rail de-duplicates
// the call itself: a payment is paid out at most once.
func (w *Workers) lifecycle() *consumer {
	return &consumer{name: "lifecycle", stream: w.cfg.Stream, filter: w.cfg.SubjectPrefix + ".*.payment.>",
		maxDeliver: 12, concurrency: 32, handle: w.handleLifecycle, log: w.log, metrics: w.metrics}
}

func (w *Workers) handleLifecycle(ctx context.Context, subject string) error {
	tenant, aggregate, id, event, ok := subjectParts(subject)
	if !ok || aggregate != "payment" {
		return nil
	}
	// Every status event writes a delivery row, and a recorded attempt may
	// make the payment's next one due: either way the dispatcher has work.
	w.wakeWebhooks()
	tenantID, err1 := uuid.Parse(tenant)
	paymentID, err2 := uuid.Parse(id)
	if err1 != nil || err2 != nil {
		return nil // not a subject this service writes: nothing to do, and retrying will not help
	}
	switch event {
	case "deposited", "document_attached":
		return w.beginPayout(ctx, tenantID, paymentID)
	case "transferring":
		return w.payOut(ctx, tenantID, paymentID)
	}
	return nil
}

// beginPayout converts a deposited payment at the price of now.
func (w *Workers) beginPayout(ctx context.Context, tenantID, paymentID uuid.UUID) error {
	p, err := w.payments.Payment(ctx, tenantID, paymentID)
	if err != nil {
		return err
	}
	if p.Status != domain.StatusDeposited {
		return nil // whether a deposited payment is held for a document is the decision's to say
	}
	prices, err := w.prices.BTCPrices(ctx)
	if err != nil {
		return err
	}
	_, err = w.execute(ctx, tenantID, paymentID, func(p domain.Payment) ([]domain.Event, error) {
		return domain.DecideBeginPayout(p, domain.BeginPayout{Prices: prices, OTCFeeRate: w.cfg.OTCFeeRate, Now: w.now()})
	})
	return err
}

// payOut calls the payout rail for a transferring payment and records the
// answer. A crash anywhere here redelivers the message: the rail answers
// the repeated idempotency key as it did the first time.
func (w *Workers) payOut(ctx context.Context, tenantID, paymentID uuid.UUID) error {
	p, err := w.payments.Payment(ctx, tenantID, paymentID)
	if err != nil {
		return err
	}
	if p.Status != domain.StatusTransferring {
		return nil
	}
	r := p.RecipientDetails
	out, err := w.rail.Payout(ctx, payout.Request{PaymentID: p.ID, IdempotencyKey: p.ID.String(), Rail: r.PayoutMethod,
		Amount: p.PayoutAmount, Currency: p.DestinationCurrency, BankName: r.BankName, AccountNumber: r.AccountNumber,
		PhoneNumber: r.PhoneNumber, LNURL: r.LNURL})
	if err != nil {
		return fmt.Errorf("payout of %s: %w", p.ID, err)
	}
	_, err = w.execute(ctx, tenantID, paymentID, func(p domain.Payment) ([]domain.Event, error) {
		return domain.DecidePayoutResult(p, domain.PayoutResult{PayoutID: out.PayoutID, Rejected: out.Rejected,
			Reason: out.Reason, Now: w.now()})
	})
	return err
}
