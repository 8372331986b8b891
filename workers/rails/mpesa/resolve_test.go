package mpesa

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/workers/rails/mpesa/mpesatest"
	"github.com/ledger/ledger/workers/rails/payout"
)

// TestResolveStuck: a payout whose B2C request got a 500 is listed as
// stuck and takes the operator's outcome once, which the next call of the
// payout answers; a B2C result that later says otherwise moves nothing.
// The same payment's change refund, answered 500 too, is resolved by its
// own key, apart from the payout.
func TestResolveStuck(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	e.fake.SetFault("/mpesa/b2c/v3/paymentrequest", mpesatest.Fault{Status500: 2})
	r := e.payoutRequest("1000")
	refund := r
	refund.IdempotencyKey, refund.Refund, refund.Amount = "change-"+r.PaymentID.String(), true, decimal.NewFromInt(50)
	for _, req := range []payout.Request{r, refund} {
		if _, err := e.rail.Payout(ctx, req); err == nil {
			t.Fatalf("%s: a 500 was taken as an answer", req.IdempotencyKey)
		}
	}
	// Stored, never asked for: not stuck, the next call sends it.
	fresh := e.payoutRequest("700")
	if _, err := e.pool.Exec(ctx, `INSERT INTO mpesa_payouts (originator_id, tenant_id, payment_id, token, amount)
		VALUES ($1, $2, $3, $4, 700)`, fresh.IdempotencyKey, fresh.TenantID, fresh.PaymentID, newToken()); err != nil {
		t.Fatal(err)
	}
	stuck, err := Payouts.Stuck(ctx, e.pool, time.Now().Add(time.Minute))
	if err != nil || len(stuck) != 2 || stuck[0].PaymentID != r.PaymentID || stuck[0].Acknowledged || stuck[0].Amount.IntPart() != 1000 ||
		stuck[1].Reference != refund.IdempotencyKey || stuck[1].PaymentID != r.PaymentID || stuck[1].Amount.IntPart() != 50 {
		t.Fatalf("got %+v, %v; want the payout and the refund answered 500, unacknowledged", stuck, err)
	}
	if s, err := Payouts.Resolve(ctx, e.pool, refund.IdempotencyKey, payout.Resolution{Paid: true, Receipt: "SLK7"}); err != nil ||
		s.Status != "success" || s.Reference != refund.IdempotencyKey {
		t.Fatalf("the refund: got %+v, %v", s, err)
	}
	if out, err := e.rail.Payout(ctx, refund); err != nil || out.Rejected || out.PayoutID != "SLK7" {
		t.Fatalf("the refund: got %+v, %v; want the operator's outcome", out, err)
	}
	if stuck, _ := Payouts.Stuck(ctx, e.pool, time.Now().Add(-time.Hour)); len(stuck) != 0 {
		t.Fatalf("got %+v asked for over an hour ago, want none", stuck)
	}
	for _, key := range []string{fresh.IdempotencyKey, uuid.NewString()} {
		if _, err := Payouts.Resolve(ctx, e.pool, key, payout.Resolution{Reason: "x"}); !errors.Is(err, payout.ErrNotStuck) {
			t.Fatalf("%s: got %v, want ErrNotStuck", key, err)
		}
	}

	failed := payout.Resolution{Reason: "not on the B2C statement"}
	if s, err := Payouts.Resolve(ctx, e.pool, r.IdempotencyKey, failed); err != nil || s.Status != "failed" || s.Reason != failed.Reason {
		t.Fatalf("got %+v, %v", s, err)
	}
	if _, err := Payouts.Resolve(ctx, e.pool, r.IdempotencyKey, failed); err != nil {
		t.Fatalf("the same outcome again: %v, want it answered", err)
	}
	if _, err := Payouts.Resolve(ctx, e.pool, r.IdempotencyKey, payout.Resolution{Paid: true, Receipt: "SLK1"}); !errors.Is(err, payout.ErrNotStuck) {
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
