package payout

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/eventstore"
	"github.com/ledger/ledger/eventstore/testenv"
	"github.com/ledger/ledger/workers/rails/lightning"
	"github.com/ledger/ledger/workers/rails/lightning/lndtest"
)

// lnEnv is the Lightning rail on a database of its own, paying from a fake
// LND to a fake LNURL-pay service.
type lnEnv struct {
	pool  *pgxpool.Pool
	node  *lndtest.Node
	payee *lndtest.Payee
	rail  *Lightning
}

func newLNEnv(t *testing.T) lnEnv {
	t.Helper()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, testenv.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := eventstore.Migrate(ctx, pool, eventstore.MigrationSet{Component: "sandbox-payouts", FS: Migrations}); err != nil {
		t.Fatal(err)
	}
	node := lndtest.NewNode(t)
	e := lnEnv{pool: pool, node: node, payee: lndtest.NewPayee(t, node)}
	e.rail = e.newRail()
	return e
}

// newRail is another process's rail: the same books, node and payee.
func (e lnEnv) newRail() *Lightning {
	return NewLightning(e.pool, &lightning.LNURLPay{AllowHTTP: true}, e.node.LND(bytes.Repeat([]byte{7}, 32)),
		FeeLimit{Sats: 10, PPM: 5000})
}

func (e lnEnv) request() Request {
	id := uuid.New()
	return Request{PaymentID: id, IdempotencyKey: id.String(), Rail: "LIGHTNING", Amount: decimal.NewFromInt(21_000),
		Currency: "BTC", LNURL: e.payee.LNURL()}
}

// check fails t unless the node paid payments hashes in sends sends and the
// payee made invoices invoices.
func (e lnEnv) check(t *testing.T, payments, sends, invoices int) {
	t.Helper()
	if p, s, i := e.node.Payments(), e.node.Sends(), e.payee.Invoices(); p != payments || s != sends || i != invoices {
		t.Fatalf("got %d payments, %d sends, %d invoices; want %d, %d, %d", p, s, i, payments, sends, invoices)
	}
}

func TestLightningPayoutPaysOnce(t *testing.T) {
	t.Parallel()
	e := newLNEnv(t)
	r := e.request()
	first, err := e.rail.Payout(context.Background(), r)
	if err != nil || first.Rejected || len(first.PayoutID) != 64 {
		t.Fatalf("first: got %+v, %v, want success with the payment hash", first, err)
	}
	second, err := e.newRail().Payout(context.Background(), r)
	if err != nil || second != first {
		t.Fatalf("second: got %+v, %v, want %+v", second, err, first)
	}
	e.check(t, 1, 1, 1)
}

// TestLightningPayoutConcurrentCalls: two processes get the same message
// at once; one invoice is stored and it is paid once.
func TestLightningPayoutConcurrentCalls(t *testing.T) {
	t.Parallel()
	e := newLNEnv(t)
	r := e.request()
	var wg sync.WaitGroup
	outs := make([]Outcome, 4)
	for i := range outs {
		wg.Go(func() {
			for {
				out, err := e.newRail().Payout(context.Background(), r)
				if err == nil {
					outs[i] = out
					return
				}
				time.Sleep(10 * time.Millisecond) // in flight in another call: retry, as the worker would
			}
		})
	}
	wg.Wait()
	for _, out := range outs {
		if out != outs[0] || out.Rejected {
			t.Fatalf("got outcomes %+v, want one success", outs)
		}
	}
	if p := e.node.Payments(); p != 1 {
		t.Fatalf("got %d payments, want 1", p)
	}
}

// TestLightningPayoutCrashBeforeLNDAnswered: the invoice was stored and the
// send reached LND, but its answer was lost (as when the process dies
// while waiting). The retry finds the payment by its hash and sends nothing.
func TestLightningPayoutCrashBeforeLNDAnswered(t *testing.T) {
	t.Parallel()
	e := newLNEnv(t)
	r := e.request()
	e.node.DropAnswers(true)
	if out, err := e.rail.Payout(context.Background(), r); err == nil {
		t.Fatalf("first: got %+v, want the lost answer's error", out)
	}
	e.node.DropAnswers(false)
	out, err := e.newRail().Payout(context.Background(), r)
	if err != nil || out.Rejected {
		t.Fatalf("retry: got %+v, %v, want success", out, err)
	}
	e.check(t, 1, 1, 1)
}

// TestLightningPayoutCrashBeforeLNDGotIt: the invoice was stored, then LND
// could not be reached. The retry pays the stored invoice, never a new one.
func TestLightningPayoutCrashBeforeLNDGotIt(t *testing.T) {
	t.Parallel()
	e := newLNEnv(t)
	r := e.request()
	e.node.SetDown(true)
	if out, err := e.rail.Payout(context.Background(), r); err == nil {
		t.Fatalf("first: got %+v, want an error while LND is down", out)
	}
	e.node.SetDown(false)
	out, err := e.newRail().Payout(context.Background(), r)
	if err != nil || out.Rejected {
		t.Fatalf("retry: got %+v, %v, want success", out, err)
	}
	e.check(t, 1, 1, 1)
}

// TestLightningPayoutRefusesInvoices: an invoice that does not match what
// was asked is never sent to LND, and the refusal is final for the key.
func TestLightningPayoutRefusesInvoices(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		edit func(b *lightning.Bolt11)
		want string
	}{
		{"wrong amount", func(b *lightning.Bolt11) { b.AmountMsat++ }, "invoice is for 21000001 msat"},
		{"expired", func(b *lightning.Bolt11) { b.Timestamp = time.Now().Add(-time.Hour) }, "too soon to pay"},
		{"expires too soon", func(b *lightning.Bolt11) { b.Expiry = 30 * time.Second }, "too soon to pay"},
		{"description hash is not the metadata's", func(b *lightning.Bolt11) { b.DescriptionHash = &[32]byte{1} },
			"description hash"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newLNEnv(t)
			e.payee.Edit(tt.edit)
			r := e.request()
			for range 2 {
				out, err := e.rail.Payout(context.Background(), r)
				if err != nil || !out.Rejected || !strings.Contains(out.Reason, tt.want) {
					t.Fatalf("got %+v, %v, want rejected with %q", out, err, tt.want)
				}
			}
			e.check(t, 0, 0, 1)
		})
	}
}

// TestLightningPayoutFailureIsRejected: LND gives up on the payment; the
// payout is rejected with its reason, and a repeat answers the same
// without sending again.
func TestLightningPayoutFailureIsRejected(t *testing.T) {
	t.Parallel()
	e := newLNEnv(t)
	e.node.FailPayments("FAILURE_REASON_NO_ROUTE")
	r := e.request()
	for range 2 {
		out, err := e.rail.Payout(context.Background(), r)
		if err != nil || !out.Rejected || !strings.Contains(out.Reason, "no_route") {
			t.Fatalf("got %+v, %v, want rejected for no_route", out, err)
		}
	}
	e.check(t, 0, 1, 1)
}

// TestLightningPayoutFailedBeforeCrash: the payment failed at LND but the
// process died before recording it; the retry learns the failure from LND.
func TestLightningPayoutFailedBeforeCrash(t *testing.T) {
	t.Parallel()
	e := newLNEnv(t)
	e.node.FailPayments("FAILURE_REASON_INSUFFICIENT_BALANCE")
	e.node.DropAnswers(true)
	r := e.request()
	if _, err := e.rail.Payout(context.Background(), r); err == nil {
		t.Fatal("first: got no error, want the lost answer's")
	}
	e.node.DropAnswers(false)
	out, err := e.rail.Payout(context.Background(), r)
	if err != nil || !out.Rejected || !strings.Contains(out.Reason, "insufficient_balance") {
		t.Fatalf("got %+v, %v, want rejected for insufficient_balance", out, err)
	}
	e.check(t, 0, 1, 1)
}

// TestLightningPayoutFailureRacingASend: two calls find no payment at LND;
// one sends, the payment fails and the call records the failure; the
// other's send, a moment later, is a new attempt LND allows on a failed
// hash, and it succeeds. The recipient must not be paid while the payout
// is recorded failed (the payment would then be refunded too): one call at
// a time pays a stored invoice, and the other waits for its outcome.
func TestLightningPayoutFailureRacingASend(t *testing.T) {
	t.Parallel()
	e := newLNEnv(t)
	r := e.request()
	e.node.FailPayments("FAILURE_REASON_NO_ROUTE")
	tracked, release := make(chan struct{}), make(chan struct{})
	slow := NewLightning(e.pool, &lightning.LNURLPay{AllowHTTP: true},
		&pausingPayer{Payer: e.node.LND(bytes.Repeat([]byte{7}, 32)), tracked: tracked, release: release}, FeeLimit{Sats: 10, PPM: 5000})
	type result struct {
		out Outcome
		err error
	}
	slowDone := make(chan result, 1)
	go func() {
		out, err := slow.Payout(context.Background(), r)
		slowDone <- result{out, err}
	}()
	<-tracked // the slow call found no payment and is about to send
	first, firstErr := e.rail.Payout(context.Background(), r)
	e.node.FailPayments("") // a route appears
	close(release)
	got := <-slowDone

	paid := e.node.Payments() == 1
	for _, c := range []result{{first, firstErr}, got} {
		if c.err == nil && c.out.Rejected && paid {
			t.Fatalf("got a call answering rejected (%s) while the recipient was paid", c.out.Reason)
		}
	}
	final, err := e.rail.Payout(context.Background(), r)
	if err != nil || final.Rejected != !paid {
		t.Fatalf("after both: got %+v, %v with the recipient paid %v; want the outcome LND had", final, err, paid)
	}
}

// pausingPayer holds its first TrackPayment's answer until release.
type pausingPayer struct {
	Payer
	once             sync.Once
	tracked, release chan struct{}
}

func (p *pausingPayer) TrackPayment(ctx context.Context, hash [32]byte) (lightning.PaymentResult, error) {
	res, err := p.Payer.TrackPayment(ctx, hash)
	p.once.Do(func() { close(p.tracked); <-p.release })
	return res, err
}

func TestByRail(t *testing.T) {
	t.Parallel()
	rails := ByRail{"LIGHTNING": nil}
	for _, rail := range []string{"BANK", "MOMO"} {
		if _, err := rails.Payout(context.Background(), Request{Rail: rail}); !errors.Is(err, ErrNoRail) {
			t.Errorf("%s: got %v, want ErrNoRail", rail, err)
		}
	}
}

func TestFeeLimit(t *testing.T) {
	t.Parallel()
	f := FeeLimit{Sats: 10, PPM: 5000}
	for amount, want := range map[int64]int64{1_000: 10, 2_000: 10, 2_001: 11, 1_000_000: 5000, 1_000_001: 5001,
		2_100_000_000_000_000: 10_500_000_000_000} {
		if got := f.of(amount); got != want {
			t.Errorf("fee limit of %d sats: got %d, want %d", amount, got, want)
		}
	}
}

// TestLightningPayoutStuckInFlight: a node downstream holds the payment's
// HTLCs, so LND's answer to the send does not come. The call stops waiting
// after payWait and gives its connection back (the payment goes on in
// LND); another call learns from a lookup that it is in flight and sends
// nothing, and once it settles, that it was paid.
func TestLightningPayoutStuckInFlight(t *testing.T) {
	t.Parallel()
	e := newLNEnv(t)
	r := e.request()
	e.node.HoldPayments()
	rail := e.newRail()
	rail.payWait = 100 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if out, err := rail.Payout(ctx, r); err == nil || ctx.Err() != nil {
		t.Fatalf("held payment: got %+v, %v (caller's context: %v), want an error before the caller gives up", out, err, ctx.Err())
	}
	if n := e.pool.Stat().AcquiredConns(); n != 0 {
		t.Fatalf("after the call: %d connections still held, want 0", n)
	}
	if out, err := e.newRail().Payout(ctx, r); !errors.Is(err, lightning.ErrPaymentInFlight) {
		t.Fatalf("another call while in flight: got %+v, %v, want ErrPaymentInFlight", out, err)
	}
	e.node.ReleasePayments()
	out, err := e.newRail().Payout(ctx, r)
	if err != nil || out.Rejected {
		t.Fatalf("after it settled: got %+v, %v, want success", out, err)
	}
	e.check(t, 1, 1, 1)
}
