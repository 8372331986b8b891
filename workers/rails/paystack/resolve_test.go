package paystack

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ledger/ledger/workers/rails/payout"
)

// TestResolveStuck: a transfer Paystack holds pending is listed as stuck
// and takes the operator's outcome once, which the next call answers; a
// webhook that later says otherwise is a contradiction, not an outcome.
func TestResolveStuck(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	r := e.za()
	e.mustPending(t, e.rail, r)
	stuck, err := Transfers.Stuck(ctx, e.pool, time.Now().Add(time.Minute))
	if err != nil || len(stuck) != 1 || stuck[0].PaymentID != r.PaymentID || !stuck[0].Acknowledged || stuck[0].Amount.String() != "1500.25" ||
		stuck[0].Currency != "ZAR" {
		t.Fatalf("got %+v, %v; want the pending ZAR 1500.25 transfer", stuck, err)
	}
	if _, err := Transfers.Resolve(ctx, e.pool, uuid.NewString(), payout.Resolution{Paid: true, Receipt: "TRF_1"}); !errors.Is(err, payout.ErrNotStuck) {
		t.Fatalf("no transfer: got %v, want ErrNotStuck", err)
	}
	paid := payout.Resolution{Paid: true, Receipt: "TRF_operator"}
	if s, err := Transfers.Resolve(ctx, e.pool, r.IdempotencyKey, paid); err != nil || s.Status != "success" || s.Receipt != "TRF_operator" {
		t.Fatalf("got %+v, %v", s, err)
	}
	if _, err := Transfers.Resolve(ctx, e.pool, r.IdempotencyKey, paid); err != nil {
		t.Fatalf("the same outcome again: %v, want it answered", err)
	}
	if _, err := Transfers.Resolve(ctx, e.pool, r.IdempotencyKey, payout.Resolution{Reason: "x"}); !errors.Is(err, payout.ErrNotStuck) {
		t.Fatalf("another outcome: got %v, want ErrNotStuck", err)
	}
	if out, err := e.rail.Payout(ctx, r); err != nil || out.Rejected || out.PayoutID != "TRF_operator" {
		t.Fatalf("got %+v, %v; want the operator's outcome", out, err)
	}
	// Paystack fails it after all: a contradiction alert, the outcome kept.
	tr, _ := e.fake.Transfer(r.IdempotencyKey)
	tr.Status = "failed"
	if code := e.fake.Send("transfer.failed", tr); code != http.StatusOK {
		t.Fatalf("late webhook: got %d", code)
	}
	if n := counted(t, e.rail.metrics.alerts.WithLabelValues("contradiction")); n != 1 {
		t.Fatalf("got %v contradiction alerts, want 1", n)
	}
	if out, err := e.rail.Payout(ctx, r); err != nil || out.Rejected {
		t.Fatalf("got %+v, %v; want the operator's outcome kept", out, err)
	}
}
