package mpesa

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ledger/ledger/workers/rails/mpesa/mpesatest"
	"github.com/ledger/ledger/workers/rails/payout"
)

// TestResolveStuck: a payout whose B2C request got a 500 is listed as
// stuck and takes the operator's outcome once, which the next call of the
// payout answers; a B2C result that later says otherwise moves nothing.
func TestResolveStuck(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	e.fake.SetFault("/mpesa/b2c/v3/paymentrequest", mpesatest.Fault{Status500: 1})
	r := e.payoutRequest("1000")
	if _, err := e.rail.Payout(ctx, r); err == nil {
		t.Fatal("a 500 was taken as an answer")
	}
	// Stored, never asked for: not stuck, the next call sends it.
	fresh := e.payoutRequest("700")
	if _, err := e.pool.Exec(ctx, `INSERT INTO mpesa_payouts (originator_id, tenant_id, payment_id, token, amount)
		VALUES ($1, $2, $3, $4, 700)`, fresh.IdempotencyKey, fresh.TenantID, fresh.PaymentID, newToken()); err != nil {
		t.Fatal(err)
	}
	stuck, err := Payouts.Stuck(ctx, e.pool, time.Now().Add(time.Minute))
	if err != nil || len(stuck) != 1 || stuck[0].PaymentID != r.PaymentID || stuck[0].Acknowledged || stuck[0].Amount.IntPart() != 1000 {
		t.Fatalf("got %+v, %v; want the payout answered 500, unacknowledged", stuck, err)
	}
	if stuck, _ := Payouts.Stuck(ctx, e.pool, time.Now().Add(-time.Hour)); len(stuck) != 0 {
		t.Fatalf("got %+v asked for over an hour ago, want none", stuck)
	}
	for _, id := range []uuid.UUID{fresh.PaymentID, uuid.New()} {
		if _, err := Payouts.Resolve(ctx, e.pool, id, payout.Resolution{Reason: "x"}); !errors.Is(err, payout.ErrNotStuck) {
			t.Fatalf("payment %s: got %v, want ErrNotStuck", id, err)
		}
	}

	failed := payout.Resolution{Reason: "not on the B2C statement"}
	if s, err := Payouts.Resolve(ctx, e.pool, r.PaymentID, failed); err != nil || s.Status != "failed" || s.Reason != failed.Reason {
		t.Fatalf("got %+v, %v", s, err)
	}
	if _, err := Payouts.Resolve(ctx, e.pool, r.PaymentID, failed); err != nil {
		t.Fatalf("the same outcome again: %v, want it answered", err)
	}
	if _, err := Payouts.Resolve(ctx, e.pool, r.PaymentID, payout.Resolution{Paid: true, Receipt: "SLK1"}); !errors.Is(err, payout.ErrNotStuck) {
		t.Fatalf("another outcome: got %v, want ErrNotStuck", err)
	}
	if out, err := e.rail.Payout(ctx, r); err != nil || !out.Rejected || out.Reason != failed.Reason {
		t.Fatalf("got %+v, %v; want the operator's outcome", out, err)
	}
	// M-Pesa reports it paid after all: a contradiction, asked about, not recorded.
	pay := mpesatest.Payment{OriginatorID: r.IdempotencyKey, Amount: 1000, Receipt: "SLK9"}
	resp, err := http.Post(e.hook.URL+CallbackPrefix+"b2c/"+tokenOf(t, e, r.IdempotencyKey), "application/json",
		bytes.NewReader(mpesatest.B2CResult(pay, 0)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	eventually(t, "the contradiction", func() bool { return counted(t, e.rail.metrics.alerts.WithLabelValues("contradiction")) == 1 })
	if out, err := e.rail.Payout(ctx, r); err != nil || !out.Rejected {
		t.Fatalf("got %+v, %v; want the operator's outcome kept", out, err)
	}
}
