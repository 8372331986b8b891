package workers

import (
	"context"
	"testing"
	"time"

	"github.com/ledger/ledger/domain"
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
	if p := e.waitStatus(t, id, domain.StatusDeposited); p.Status != domain.StatusDeposited {
		t.Fatalf("a payment deposited just now moved to %s", p.Status)
	}

	w.cfg.StalledAfter = -time.Second // everything in flight counts as stalled
	for _, want := range []string{domain.StatusTransferring, domain.StatusSuccess, domain.StatusSuccess} {
		if err := w.moveStalled(ctx); err != nil {
			t.Fatal(err)
		}
		e.waitStatus(t, id, want)
	}
	if payouts, calls := e.payoutBooks(t, id); payouts != 1 || calls != 2 {
		t.Fatalf("sandbox rail: %d payouts after %d calls, want 1 after 2", payouts, calls)
	}
}
