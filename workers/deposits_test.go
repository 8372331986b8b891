package workers

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/workers/rails/lightning"
	"github.com/ledger/ledger/workers/rails/lightning/lndtest"
	"github.com/ledger/ledger/workers/rails/payout"
)

// lightningPayment creates a payment whose invoice node made, as POST
// /payments does in production.
func (e env) lightningPayment(t *testing.T, node *lightning.LND) domain.PaymentSnapshot {
	t.Helper()
	id := uuid.Must(uuid.NewV7())
	return e.created(t, id, func(sats int64) domain.LightningInvoice {
		inv, err := node.CreateInvoice(context.Background(), lightning.InvoiceRequest{PaymentID: id, AmountSats: sats,
			Description: "deposit", CreatedAt: time.Now(), Expiry: domain.DefaultValidity.Lightning})
		if err != nil {
			t.Fatal(err)
		}
		return domain.LightningInvoice{PaymentRequest: inv.PaymentRequest, PaymentHash: inv.PaymentHash,
			AmountSats: inv.AmountSats, ExpiresAt: inv.ExpiresAt}
	})
}

// strangerPayment creates a payment whose invoice the node never made (an
// earlier node's, say): its lookups are refused.
func (e env) strangerPayment(t *testing.T) domain.PaymentSnapshot {
	t.Helper()
	return e.created(t, uuid.Must(uuid.NewV7()), func(sats int64) domain.LightningInvoice {
		return domain.LightningInvoice{PaymentRequest: "lnbcrt1", PaymentHash: strings.Repeat("ab", 32), AmountSats: sats}
	})
}

func (e env) watchingWorkers(node *lightning.LND) *Workers {
	w := e.workers(payout.NewSandbox(e.pool, 0))
	w.cfg.Invoices, w.cfg.InvoicePoll = node, 20*time.Millisecond
	return w
}

// newLND is a fake LND and this service's client of it.
func newLND(t *testing.T) (*lndtest.Node, *lightning.LND) {
	fake := lndtest.NewNode(t)
	return fake, fake.LND(bytes.Repeat([]byte{9}, 32))
}

// expireAt runs w's expiry timer once, at at.
func expireAt(t *testing.T, w *Workers, at time.Time) {
	t.Helper()
	w.now = func() time.Time { return at }
	if err := w.expireDue(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// checkDepositedOnce fails t unless p took its invoice's amount once.
func checkDepositedOnce(t *testing.T, p domain.PaymentSnapshot) {
	t.Helper()
	deposits := 0
	for _, l := range p.StatusLogs {
		if l.Status == domain.StatusDeposited {
			deposits++
		}
	}
	if want := decimal.NewFromInt(p.LightningInvoice.AmountSats); deposits != 1 || !p.AmountDeposited.Equal(want) {
		t.Fatalf("got %d deposits of %s sats in total, want 1 of %s: %+v", deposits, p.AmountDeposited, want, p.StatusLogs)
	}
}

// TestLightningDepositOnceWithTwoWatchers: two processes watch the open
// invoices; a settled invoice moves its payment to deposited once, and the
// lifecycle then pays it out as usual. An invoice the node does not know
// (the first to be looked up) holds up none of the others.
func TestLightningDepositOnceWithTwoWatchers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	fake, node := newLND(t)
	e.strangerPayment(t)
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() { _ = e.watchingWorkers(node).Run(ctx) })
	}
	defer func() { stop(); wg.Wait() }()
	var ids []uuid.UUID
	for range 5 {
		p := e.lightningPayment(t, node)
		ids = append(ids, p.ID)
		fake.Settle(p.LightningInvoice.PaymentHash, time.Now())
	}
	open := e.lightningPayment(t, node) // never paid: stays created
	for _, id := range ids {
		checkDepositedOnce(t, e.waitStatus(t, id, domain.StatusSuccess))
	}
	if p, err := e.payments.Payment(ctx, e.tenant, open.ID); err != nil || p.Status != domain.StatusCreated {
		t.Fatalf("unpaid invoice: got %s, %v, want created", p.Status, err)
	}
}

// TestLightningDepositConcurrentRecords races two watchers' records of the
// same settled invoice, as two processes polling at once do.
func TestLightningDepositConcurrentRecords(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	fake, node := newLND(t)
	p := e.lightningPayment(t, node)
	fake.Settle(p.LightningInvoice.PaymentHash, time.Now())
	var wg sync.WaitGroup
	for range 4 {
		w := e.watchingWorkers(node)
		wg.Go(func() {
			if err := w.pollInvoices(context.Background()); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	checkDepositedOnce(t, e.waitStatus(t, p.ID, domain.StatusDeposited))
}

// TestLightningDepositFoundAfterRestart: invoices settle while no process
// runs. The first process to start finds them: its first poll, and its
// expiry timer for one paid just before its deadline that the process
// starts after, records the deposit instead of expiring a paid payment.
func TestLightningDepositFoundAfterRestart(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	fake, node := newLND(t)
	early := e.lightningPayment(t, node)
	fake.Settle(early.LightningInvoice.PaymentHash, time.Now())
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- e.watchingWorkers(node).Run(ctx) }()
	checkDepositedOnce(t, e.waitStatus(t, early.ID, domain.StatusSuccess))
	stop()
	<-done

	paid, unpaid, stranger := e.lightningPayment(t, node), e.lightningPayment(t, node), e.strangerPayment(t)
	fake.Settle(paid.LightningInvoice.PaymentHash, paid.ExpiresAt.Add(-time.Second))
	w := e.watchingWorkers(node)
	expireAt(t, w, stranger.ExpiresAt.Add(time.Minute))
	checkDepositedOnce(t, e.waitStatus(t, paid.ID, domain.StatusDeposited))
	e.waitStatus(t, unpaid.ID, domain.StatusExpired)
	e.waitStatus(t, stranger.ID, domain.StatusExpired)
}

// TestLightningDepositWaitsForTheNode: while the node cannot answer, an
// overdue Lightning payment is not expired, since its invoice may be paid.
func TestLightningDepositWaitsForTheNode(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	fake, node := newLND(t)
	p := e.lightningPayment(t, node)
	fake.SetDown(true)
	w := e.watchingWorkers(node)
	expireAt(t, w, p.ExpiresAt.Add(time.Minute))
	if got, err := e.payments.Payment(context.Background(), e.tenant, p.ID); err != nil || got.Status != domain.StatusCreated {
		t.Fatalf("got %s, %v, want created while the node is down", got.Status, err)
	}
	fake.SetDown(false)
	if err := w.expireDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.waitStatus(t, p.ID, domain.StatusExpired)
}

// TestExpiryCancelsTheInvoice: an overdue payment whose invoice is unpaid
// has the invoice canceled at the node before it expires, so the payer's
// wallet can no longer pay it: no money arrives for an expired payment.
func TestExpiryCancelsTheInvoice(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	fake, node := newLND(t)
	p := e.lightningPayment(t, node)
	w := e.watchingWorkers(node)
	expireAt(t, w, p.ExpiresAt.Add(time.Second))
	e.waitStatus(t, p.ID, domain.StatusExpired)
	if got := fake.InvoiceState(p.LightningInvoice.PaymentHash); got != "CANCELED" {
		t.Fatalf("invoice of the expired payment: got %s, want CANCELED", got)
	}
	if fake.Settle(p.LightningInvoice.PaymentHash, time.Now()) {
		t.Fatal("the invoice of an expired payment could still be paid")
	}
}

// TestExpiryRecordsAnInvoicePaidWhileCanceled: the payer's payment lands
// between the expiry's lookup (open) and its cancel (refused: settled).
// The payment is deposited, not expired.
func TestExpiryRecordsAnInvoicePaidWhileCanceled(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	fake, node := newLND(t)
	p := e.lightningPayment(t, node)
	fake.SettleOnCancel()
	w := e.watchingWorkers(node)
	expireAt(t, w, p.ExpiresAt.Add(time.Second))
	checkDepositedOnce(t, e.waitStatus(t, p.ID, domain.StatusDeposited))
}

// TestLightningDepositSettledPastTheDeadline: the node settled the invoice
// at a time past the payment's deadline by our clock (its invoice, made
// after the payment, expires a little later; or the clocks differ). The
// money arrived for a payment still created: it is deposited, by the
// expiry timer and by the watcher alike, not refused and left created.
func TestLightningDepositSettledPastTheDeadline(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	fake, node := newLND(t)
	w := e.watchingWorkers(node)
	byWatcher := e.lightningPayment(t, node)
	fake.Settle(byWatcher.LightningInvoice.PaymentHash, byWatcher.ExpiresAt.Add(time.Second))
	if err := w.pollInvoices(context.Background()); err != nil {
		t.Fatal(err)
	}
	checkDepositedOnce(t, e.waitStatus(t, byWatcher.ID, domain.StatusDeposited))

	byExpiry := e.lightningPayment(t, node)
	fake.Settle(byExpiry.LightningInvoice.PaymentHash, byExpiry.ExpiresAt.Add(time.Second))
	expireAt(t, w, byExpiry.ExpiresAt.Add(2*time.Second))
	checkDepositedOnce(t, e.waitStatus(t, byExpiry.ID, domain.StatusDeposited))
}

// TestExpiryGoesPastPaymentsItCannotExpire: while the node cannot answer,
// overdue Lightning payments stay created; the overdue payments after
// them, here one whose invoice the node does not watch, still expire.
func TestExpiryGoesPastPaymentsItCannotExpire(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	fake, node := newLND(t)
	waiting := e.lightningPayment(t, node)
	unwatched := e.created(t, uuid.Must(uuid.NewV7()), func(sats int64) domain.LightningInvoice {
		return domain.LightningInvoice{PaymentRequest: "lnbcrt1", AmountSats: sats}
	})
	fake.SetDown(true)
	w := e.watchingWorkers(node)
	w.expiryPage = 1
	expireAt(t, w, unwatched.ExpiresAt.Add(time.Minute))
	e.waitStatus(t, unwatched.ID, domain.StatusExpired)
	if got, err := e.payments.Payment(context.Background(), e.tenant, waiting.ID); err != nil || got.Status != domain.StatusCreated {
		t.Fatalf("the payment whose invoice the node cannot look up: got %s, %v, want created", got.Status, err)
	}
}

// TestLightningDepositPastAnInvoiceTheNodeCannotRead: one open invoice's
// lookups fail; the settled invoice after it is still found and recorded,
// and the poll reports the failure.
func TestLightningDepositPastAnInvoiceTheNodeCannotRead(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	fake, node := newLND(t)
	unreadable, paid := e.lightningPayment(t, node), e.lightningPayment(t, node) // polled in this order (UUIDv7 ids)
	fake.BreakLookup(unreadable.LightningInvoice.PaymentHash)
	fake.Settle(paid.LightningInvoice.PaymentHash, time.Now())
	if err := e.watchingWorkers(node).pollInvoices(context.Background()); err == nil || !strings.Contains(err.Error(), unreadable.ID.String()) {
		t.Errorf("poll: got %v, want the unreadable invoice's failure", err)
	}
	checkDepositedOnce(t, e.waitStatus(t, paid.ID, domain.StatusDeposited))
}
