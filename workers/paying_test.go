package workers

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
)

// TestTransferringMessageOfAPaymentPaidOutHereWaitsWithoutReading checks
// that a transferring message for a payment this process is paying out is
// handed back for the rest of PayoutGrace without reading the payment:
// these workers have no Payments, so any read would panic.
func TestTransferringMessageOfAPaymentPaidOutHereWaitsWithoutReading(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	w := &Workers{cfg: Config{PayoutGrace: 10 * time.Second}, now: func() time.Time { return now },
		settled: newSettledHere(), paying: newPayingHere(), advancing: newAdvancingHere()}
	tenant, payment := uuid.New(), uuid.New()
	subject := "ledger." + tenant.String() + ".payment." + payment.String() + ".transferring"

	w.paying.start(payment, now.Add(-3*time.Second))
	err := w.handleLifecycle(context.Background(), subject)
	var later retryLater
	if !errors.As(err, &later) || time.Duration(later) != 7*time.Second {
		t.Fatalf("handleLifecycle = %v, want a retry in the 7 s left of the grace", err)
	}

	// Its deposited message has nothing left to do either, and reads nothing.
	deposited := "ledger." + tenant.String() + ".payment." + payment.String() + ".deposited"
	if err := w.handleLifecycle(context.Background(), deposited); err != nil {
		t.Fatalf("deposited message of a payment converted here: %v, want nil (acked)", err)
	}

	w.paying.done(payment)
	if _, ok := w.paying.convertedAt(payment); ok {
		t.Fatal("the payment is still held after done")
	}
}

// TestDepositedMessageWaitsForTheConversionHere checks that a deposited
// message arriving while this process's fast path converts the payment
// waits for that conversion and then, the payment being paid out here,
// acks without reading it (these workers have no Payments: a read would
// panic).
func TestDepositedMessageWaitsForTheConversionHere(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	w := &Workers{cfg: Config{PayoutGrace: 10 * time.Second}, now: func() time.Time { return now },
		settled: newSettledHere(), paying: newPayingHere(), advancing: newAdvancingHere()}
	tenant, payment := uuid.New(), uuid.New()
	subject := "ledger." + tenant.String() + ".payment." + payment.String() + ".deposited"

	w.advancing.start(payment) // the fast path converts it
	handled := make(chan error, 1)
	// Handled before the conversion is decided, the message would find
	// the payment neither paid out nor settled here, and read it.
	go func() { handled <- w.handleLifecycle(context.Background(), subject) }()
	w.paying.start(payment, now) // converted; the payout starts
	w.advancing.decided(payment)
	select {
	case err := <-handled:
		if err != nil {
			t.Fatalf("handleLifecycle = %v, want nil: the payment is being paid out here", err)
		}
	case <-time.After(advanceWait / 2):
		t.Fatal("the message still waits after the conversion was decided")
	}
	if len(w.advancing.payments) != 0 {
		t.Errorf("%d payments still advancing, want 0", len(w.advancing.payments))
	}
}
