package workers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/workers/rails/payout"
)

// The lifecycle consumers move funded payments on: a deposit (or the
// document a held payment waited for) converts the payment and records its
// payout intent; the intent calls the payout rail with the payment id as
// idempotency key and records the rail's answer. Each step is decided on
// the payment's current state, so a redelivered or duplicated message
// decides nothing new, and the rail de-duplicates the call itself: a
// payment is paid out at most once.
//
// There is one durable per event they act on, each filtered to that
// event's subjects: a payment publishes some ten events (webhook attempts
// among them) and the steps need two or three. One durable on every
// payment subject received all of them: under load it fell thousands of
// messages behind, and a deposit whose step the fast path had not taken
// waited behind them for seconds. (NATS 2.10 can filter one durable on
// several subjects; the 2.9 servers this runs on cannot.) They replace the
// single durable "lifecycle" of earlier versions, starting where it had
// got to, and it is deleted once they all exist (retireDurable).
var lifecycleEvents = []struct {
	event       string
	concurrency int // messages handled at once; deposits run conversions and payouts
}{{"deposited", 16}, {"document_attached", 8}, {"transferring", 8}}

// lifecycleReplaces is the durable the lifecycle consumers replaced.
const lifecycleReplaces = "lifecycle"

func (w *Workers) lifecycleConsumers() []*consumer {
	var cs []*consumer
	for _, e := range lifecycleEvents {
		cs = append(cs, &consumer{name: "lifecycle_" + e.event, replaces: lifecycleReplaces, stream: w.cfg.Stream,
			filter: w.cfg.SubjectPrefix + ".*.payment.*." + e.event, maxDeliver: 12, concurrency: e.concurrency,
			handle: w.handleLifecycle, log: w.log, metrics: w.metrics})
	}
	return cs
}

func (w *Workers) handleLifecycle(ctx context.Context, subject string) error {
	tenantID, paymentID, event, ok := paymentSubject(subject)
	if !ok {
		return nil
	}
	if w.settled.has(paymentID) {
		return nil // its payout result is recorded: no step is left
	}
	var step func(ctx context.Context, tenantID, paymentID uuid.UUID) error
	var status string // the status the step starts from
	switch event {
	case "deposited", "document_attached":
		w.advancing.wait(ctx, paymentID)
		if w.settled.has(paymentID) {
			return nil
		}
		if _, ok := w.paying.convertedAt(paymentID); ok {
			return nil // converted here, and being paid out: nothing is left to convert
		}
		step, status = w.beginPayout, domain.StatusDeposited
	case "transferring":
		// This process is paying it out: the answer takeOverPayout would
		// read its way to, until PayoutGrace has passed (payingHere).
		if at, ok := w.paying.convertedAt(paymentID); ok {
			if wait := w.graceLeft(at); wait > 0 {
				return retryLater(wait)
			}
		}
		step, status = w.takeOverPayout, domain.StatusTransferring
	default:
		return nil
	}
	// Usually the process that made the change has taken the step already
	// (Appended): the status alone says so, without reading the payment.
	// The step reads it again, so a status that moves after this check
	// changes nothing.
	if now, err := w.payments.PaymentStatus(ctx, tenantID, paymentID); err != nil || now != status {
		return err
	}
	return step(ctx, tenantID, paymentID)
}

// beginPayout converts a deposited payment at the price of now and, in
// the same go, pays it out (payOutPayment) rather than waiting for the
// transferring message's relay hop (commit, sequencing, JetStream,
// consumer): that message finds the payment moved on and does nothing,
// unless this process failed or died before the payout was recorded, and
// then it is the one that pays (takeOverPayout).
func (w *Workers) beginPayout(ctx context.Context, tenantID, paymentID uuid.UUID) error {
	return w.convertAndPayOut(ctx, tenantID, paymentID, func() {})
}

// convertAndPayOut is beginPayout calling decided once the conversion is
// recorded (and the payout about to start) or not made.
func (w *Workers) convertAndPayOut(ctx context.Context, tenantID, paymentID uuid.UUID, decided func()) error {
	var converted bool // by this call: another process's conversion is its to pay out
	after, err := w.execute(ctx, tenantID, paymentID, func(p domain.Payment) ([]domain.Event, error) {
		converted = false
		// A payment that has left deposited has nothing to convert (most
		// messages find it so, after the fast path): no price is asked for.
		// Whether a deposited one is held for a document is the decision's
		// to say.
		if p.Status != domain.StatusDeposited {
			return nil, nil
		}
		prices, err := w.prices.BTCPrices(ctx)
		if err != nil {
			return nil, err
		}
		events, err := domain.DecideBeginPayout(p, domain.BeginPayout{Prices: prices, OTCFeeRate: w.cfg.OTCFeeRate, Now: w.now()})
		converted = len(events) > 0
		return events, err
	})
	if err != nil || !converted || after.Status != domain.StatusTransferring {
		decided()
		return err
	}
	w.paying.start(paymentID, after.Payment.UpdatedAt)
	defer w.paying.done(paymentID)
	decided()
	if err := w.payOutPayment(ctx, tenantID, after); err != nil {
		// The conversion is recorded; its transferring message retries the payout.
		w.log.Warn("lifecycle: payout after conversion failed; its message will retry it", "payment", paymentID, "err", err)
	}
	return nil
}

// takeOverPayout is the transferring message's step. The process that
// converted the payment pays it out at once (beginPayout), so for
// PayoutGrace after the conversion the message leaves the payout to it and
// looks again later: it pays only when that process failed or died first.
// The grace saves a second, concurrent rail call (and, for a Lightning
// address, a second invoice asked of the recipient); it is not what makes
// the payout happen once, which the rail's idempotency key does.
func (w *Workers) takeOverPayout(ctx context.Context, tenantID, paymentID uuid.UUID) error {
	p, ok, err := w.paymentAt(ctx, tenantID, paymentID, domain.StatusTransferring)
	if !ok {
		return err
	}
	// The grace runs from the conversion, whatever changed since (a
	// document attached meanwhile would otherwise restart it each time).
	converted := p.Payment.ConvertedAt()
	if converted.IsZero() {
		converted = p.Payment.UpdatedAt
	}
	if wait := w.graceLeft(converted); wait > 0 {
		return retryLater(wait)
	}
	return w.payOutPayment(ctx, tenantID, p)
}

// graceLeft is how much of PayoutGrace is left for a payment converted at
// convertedAt: until then its transferring message leaves the payout to
// the process that converted it.
func (w *Workers) graceLeft(convertedAt time.Time) time.Duration {
	return w.cfg.PayoutGrace - w.now().Sub(convertedAt)
}

// payOut calls the payout rail for a transferring payment and records the
// answer. A crash anywhere here redelivers the message: the rail answers
// the repeated idempotency key as it did the first time.
func (w *Workers) payOut(ctx context.Context, tenantID, paymentID uuid.UUID) error {
	p, ok, err := w.paymentAt(ctx, tenantID, paymentID, domain.StatusTransferring)
	if !ok {
		return err
	}
	return w.payOutPayment(ctx, tenantID, p)
}

// paymentAt reads a payment and says whether it is at status: a step
// whose status the payment has left has nothing to do.
func (w *Workers) paymentAt(ctx context.Context, tenantID, paymentID uuid.UUID, status string) (domain.PaymentSnapshot, bool, error) {
	p, err := w.payments.Payment(ctx, tenantID, paymentID)
	return p, err == nil && p.Status == status, err
}

// payOutPayment calls the rail for p, a transferring payment, and records its answer.
func (w *Workers) payOutPayment(ctx context.Context, tenantID uuid.UUID, p domain.PaymentSnapshot) error {
	r := p.RecipientDetails
	out, err := w.rail.Payout(ctx, payout.Request{PaymentID: p.ID, TenantID: tenantID, IdempotencyKey: p.ID.String(), Rail: r.PayoutMethod, Name: r.Name,
		Amount: p.PayoutAmount, Currency: p.DestinationCurrency, BankName: r.BankName, AccountNumber: r.AccountNumber,
		PhoneNumber: r.PhoneNumber, LNURL: r.LNURL})
	if errors.Is(err, payout.ErrPending) {
		// The rail reports the outcome when its provider ends the payout;
		// retrying the message meanwhile would only park it as a dead letter.
		w.log.Debug("lifecycle: payout pending at the provider", "payment", p.ID)
		return nil
	}
	if err != nil {
		return fmt.Errorf("payout of %s: %w", p.ID, err)
	}
	// Decided on p, the payment as the conversion left it or as it was
	// just read, rather than on another read: it changes only when a
	// document is attached meanwhile, and then the append is refused and
	// the result decided again on a fresh read.
	after, err := w.executeFrom(ctx, tenantID, p.ID, p, func(p domain.Payment) ([]domain.Event, error) {
		return domain.DecidePayoutResult(p, domain.PayoutResult{PayoutID: out.PayoutID, Rejected: out.Rejected,
			Reason: out.Reason, Now: w.now()})
	})
	if err == nil && (after.Status == domain.StatusSuccess || after.Status == domain.StatusFailed) {
		w.settled.add(p.ID)
	}
	if err == nil && after.Status == domain.StatusSuccess && after.ChangeRefundStatus == domain.ChangeNone {
		w.settledOwingNoChange.add(p.ID)
	}
	return err
}
