package lndtest

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ledger/ledger/workers/rails/lightning"
)

// TestInvoiceExpires: as lnd's invoice expiry watcher does, the fake
// cancels an open invoice once its expiry has passed: lookups read
// CANCELED, and the payer can no longer pay it.
func TestInvoiceExpires(t *testing.T) {
	t.Parallel()
	n := NewNode(t)
	c := n.LND(bytes.Repeat([]byte{1}, 32))
	ctx := context.Background()
	// lnd dates an invoice in whole seconds, so up to a second of its
	// expiry is gone when it is made: it is still open after one with 3 s.
	inv, err := c.CreateInvoice(ctx, lightning.InvoiceRequest{PaymentID: uuid.New(), AmountSats: 1_000, Expiry: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if s, err := c.LookupInvoice(ctx, inv.PaymentHash); err != nil || s.State != "OPEN" {
		t.Fatalf("before its expiry: %+v, %v; want OPEN", s, err)
	}
	for time.Now().Before(inv.ExpiresAt) {
		time.Sleep(20 * time.Millisecond)
	}
	if s, err := c.LookupInvoice(ctx, inv.PaymentHash); err != nil || s.State != "CANCELED" {
		t.Fatalf("past its expiry: %+v, %v; want CANCELED", s, err)
	}
	if n.Settle(inv.PaymentHash, time.Now()) {
		t.Fatal("the payer paid an invoice past its expiry")
	}
}
