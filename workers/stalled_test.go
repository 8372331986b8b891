package workers

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/projections"
	"github.com/ledger/ledger/workers/rails/payout"
)

// TestStalledPaymentsMoveOn: a deposited payment whose messages nobody
// handles (its consumer gave up) is moved on by the sweep alone: converted
// by one sweep, whose payout "crashes" after the rail paid; paid out by the
// next, to success with one payout; further sweeps change nothing, and a
// payment that has not been still for StalledAfter is left alone.
func TestStalledPaymentsMoveOn(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	id := e.deposited(t)
	w := e.workers(&crashingRail{rail: payout.NewSandbox(e.pool, 0), crashes: 1})

	w.cfg.StalledAfter = time.Hour
	if err := w.moveStalled(ctx); err != nil {
		t.Fatal(err)
	}
	if p := e.payment(t, id); p.Status != domain.StatusDeposited {
		t.Fatalf("a payment deposited just now moved to %s", p.Status)
	}

	w.cfg.StalledAfter = -time.Second // everything in flight counts as stalled
	for _, want := range []string{domain.StatusTransferring, domain.StatusSuccess, domain.StatusSuccess} {
		if err := w.moveStalled(ctx); err != nil {
			t.Fatal(err)
		}
		if p := e.payment(t, id); p.Status != want {
			t.Fatalf("after a sweep: got %s, want %s", p.Status, want)
		}
	}
	if payouts, calls := e.payoutBooks(t, id); payouts != 1 || calls != 2 {
		t.Fatalf("sandbox rail: %d payouts after %d calls, want 1 after 2", payouts, calls)
	}
}

// TestStalledHeldPaymentMovesOnOnceDocumented: a payment held for a
// supporting document is left alone by the sweep until its document
// arrives, and then moved on by the sweep alone (its document_attached
// message given up on): heldForDocuments stays true until the conversion,
// so the sweep must not go by that flag.
func TestStalledHeldPaymentMovesOnOnceDocumented(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	id := e.depositedOf(t, domain.DocumentsThreshold+10_000)
	if p := e.waitStatus(t, id, domain.StatusDeposited); !p.HeldForDocuments {
		t.Fatalf("a South African payment above ZAR %d deposited without a document: got heldForDocuments false", domain.DocumentsThreshold)
	}
	w := e.workers(payout.NewSandbox(e.pool, 0))
	w.cfg.StalledAfter = -time.Second
	if err := w.moveStalled(ctx); err != nil {
		t.Fatal(err)
	}
	if payouts, calls := e.payoutBooks(t, id); payouts != 0 || calls != 0 {
		t.Fatalf("sandbox rail before the document: %d payouts after %d calls, want none", payouts, calls)
	}

	e.attachDocument(t, id)
	for range 2 {
		if err := w.moveStalled(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if p := e.payment(t, id); p.Status != domain.StatusSuccess {
		t.Fatalf("after two sweeps with its document: got %s, want success", p.Status)
	}
	if payouts, _ := e.payoutBooks(t, id); payouts != 1 {
		t.Fatalf("sandbox rail: %d payouts, want 1", payouts)
	}
}

// TestStalledSweepPagesPastFailingPayments: payments whose step keeps
// failing (here one whose payout rail always refuses to answer) append
// nothing, so they stay the oldest stalled ones; the sweep must still
// reach the payments behind them.
func TestStalledSweepPagesPastFailingPayments(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	stuck := e.deposited(t)
	rail := &refusingRail{rail: payout.NewSandbox(e.pool, 0), refuse: stuck}
	w := e.workers(rail)
	w.cfg.StalledAfter = -time.Second
	w.stalled.batch = 1
	if err := w.moveStalled(ctx); err != nil {
		t.Fatal(err)
	}
	if p := e.payment(t, stuck); p.Status != domain.StatusTransferring { // converted; its payout failed
		t.Fatalf("after a sweep: got %s, want transferring", p.Status)
	}

	behind := e.deposited(t)
	for range 4 {
		if err := w.moveStalled(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if p := e.payment(t, behind); p.Status != domain.StatusSuccess {
		t.Fatalf("the payment behind it: got %s, want success", p.Status)
	}
	if p := e.payment(t, stuck); p.Status != domain.StatusTransferring {
		t.Fatalf("the payment whose rail refuses: got %s, want transferring", p.Status)
	}
}

// TestStalledSweepGoesByTheLastLifecycleEvent: webhook attempts recorded
// after a payment last moved (its receiver failing, say) do not make it
// look as if it had moved: the sweep takes it on StalledAfter after its
// deposit, however recent its last attempt.
func TestStalledSweepGoesByTheLastLifecycleEvent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	id := e.deposited(t)
	time.Sleep(50 * time.Millisecond)
	stalledSince := time.Now()
	time.Sleep(50 * time.Millisecond)
	code := 500
	retry := time.Now().Add(time.Minute)
	for attempt := 1; attempt <= 2; attempt++ {
		_, err := e.payments.RecordWebhookAttempts(ctx, []domain.WebhookAttemptRecord{{TenantID: e.tenant, PaymentID: id,
			Attempt: domain.PaymentWebhookAttempted{EventID: uuid.New(), Type: "payment.deposited", Attempt: attempt,
				StatusCode: &code, NextAttemptAt: &retry, At: time.Now()}}}, time.Now(), time.Time{})
		if err != nil {
			t.Fatal(err)
		}
	}
	w := e.workers(payout.NewSandbox(e.pool, 0))
	w.now = func() time.Time { return stalledSince }
	w.cfg.StalledAfter = 0 // stalled: no lifecycle event since stalledSince
	if err := w.moveStalled(ctx); err != nil {
		t.Fatal(err)
	}
	if p := e.payment(t, id); p.Status != domain.StatusSuccess { // converted and paid out by the sweep's step
		t.Fatalf("after a sweep: got %s, want success", p.Status)
	}
	if payouts, _ := e.payoutBooks(t, id); payouts != 1 {
		t.Fatalf("sandbox rail: %d payouts, want 1", payouts)
	}
}

// refusingRail fails every payout of one payment, as a rail that is down
// for it; the others go to rail.
type refusingRail struct {
	rail   payout.Rail
	refuse uuid.UUID
}

func (r *refusingRail) Payout(ctx context.Context, req payout.Request) (payout.Outcome, error) {
	if req.PaymentID == r.refuse {
		return payout.Outcome{}, errors.New("rail unavailable")
	}
	return r.rail.Payout(ctx, req)
}

// attachDocument stores a document and attaches it to payment id.
func (e env) attachDocument(t *testing.T, id uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	doc := domain.StoredDocument{ID: uuid.New(), TenantID: e.tenant, Owner: id, ContentType: "application/pdf", FileName: "invoice.pdf"}
	size, sum, err := projections.NewReader(e.pool).PutDocument(ctx, doc, strings.NewReader("%PDF-1.4 invoice"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.payments.ExecutePayment(ctx, paymentRef(e.tenant, id), domain.Metadata{}, func(p domain.Payment) ([]domain.Event, error) {
		return domain.DecideAttachPaymentDocument(p, domain.AttachPaymentDocument{DocumentID: doc.ID, FileName: doc.FileName,
			ContentType: doc.ContentType, Size: size, SHA256: sum, Now: time.Now()})
	})
	if err != nil {
		t.Fatal(err)
	}
}
