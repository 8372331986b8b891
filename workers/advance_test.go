package workers

import (
	"context"
	"testing"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/workers/rails/payout"
)

// TestAdvancePaysOutWithoutTheMessages: with no consumer running (no
// JetStream message is ever handled), a deposited payment handed to
// Appended is converted and paid out by this process alone, once, and
// running the step again changes nothing.
func TestAdvancePaysOutWithoutTheMessages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.deposited(t)
	w := e.workers(payout.NewSandbox(e.pool, 0))
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- w.runNow(ctx) }()
	defer func() { stop(); <-done }()

	w.Appended(paymentRef(e.tenant, id), false, true)
	p := e.waitStatus(t, id, domain.StatusSuccess)
	if err := w.beginPayout(ctx, e.tenant, id); err != nil {
		t.Fatal(err)
	}
	if len(p.StatusLogs) != 4 {
		t.Fatalf("status logs: got %+v", p.StatusLogs)
	}
	if payouts, calls := e.payoutBooks(t, id); payouts != 1 || calls != 1 {
		t.Fatalf("sandbox rail: %d payouts after %d calls, want 1 after 1", payouts, calls)
	}
}
