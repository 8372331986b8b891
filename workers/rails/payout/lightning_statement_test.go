package payout

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/workers/rails/lightning"
	"github.com/ledger/ledger/workers/rails/statement"
)

// The node's statement against the fake node, over more than a page of
// invoices and of payments: settled deposits by settle date, payouts
// under their idempotency keys (failed ones too), payments made by hand
// under their hash, the window's first instant in and its end out.
func TestLightningStatement(t *testing.T) {
	t.Parallel()
	e := newLNEnv(t)
	ctx := context.Background()
	from := time.Now().UTC().Truncate(time.Second).Add(-time.Hour)
	to := from.Add(2 * time.Hour)
	want := map[string]statement.Record{}

	paid := e.request()
	if out, err := e.rail.Payout(ctx, paid); err != nil || out.Rejected {
		t.Fatalf("got %+v, %v", out, err)
	}
	want[paid.IdempotencyKey] = statement.Record{Direction: statement.Out, Amount: decimal.NewFromInt(21_000), Status: statement.Success}
	e.node.FailPayments("FAILURE_REASON_NO_ROUTE")
	failed := e.request()
	if out, err := e.rail.Payout(ctx, failed); err != nil || !out.Rejected {
		t.Fatalf("got %+v, %v", out, err)
	}
	want[failed.IdempotencyKey] = statement.Record{Direction: statement.Out, Amount: decimal.NewFromInt(21_000), Status: statement.Failed}
	first := e.node.PayByHand(700, from)
	want[first] = statement.Record{Direction: statement.Out, Amount: decimal.NewFromInt(700), Status: statement.Success, At: from}
	e.node.PayByHand(701, to)
	e.node.PayByHand(702, from.Add(-time.Second))
	for i := range 55 {
		want[e.node.PayByHand(int64(800+i), from.Add(time.Duration(i)*time.Second))] = statement.Record{Direction: statement.Out,
			Amount: decimal.NewFromInt(int64(800 + i)), Status: statement.Success}
	}

	node := e.node.LND(bytes.Repeat([]byte{9}, 32))
	for i := range 60 {
		inv, err := node.CreateInvoice(ctx, lightning.InvoiceRequest{PaymentID: uuid.New(), AmountSats: int64(1000 + i), Expiry: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		switch at := from.Add(time.Duration(i) * time.Minute); i {
		case 57: // settled as the window ends: the next window's
			e.node.Settle(inv.PaymentHash, to)
		case 58: // settled before it
			e.node.Settle(inv.PaymentHash, from.Add(-time.Second))
		case 59: // open
		default:
			e.node.Settle(inv.PaymentHash, at)
			want[inv.PaymentHash] = statement.Record{Direction: statement.In, Amount: decimal.NewFromInt(int64(1000 + i)),
				Status: statement.Success, At: at}
		}
	}

	got, err := lightning.NewStatement(node, NewLightningPayoutKeys(e.pool)).Records(ctx, from, to)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("got %d records, want %d", len(got), len(want))
	}
	for _, r := range got {
		w, ok := want[r.Ref]
		if !ok || r.Rail != "LIGHTNING" || r.Currency != "sats" || r.Direction != w.Direction || !r.Amount.Equal(w.Amount) ||
			r.Status != w.Status || !w.At.IsZero() && !r.At.Equal(w.At) {
			t.Errorf("got %+v, want %+v", r, w)
		}
		delete(want, r.Ref)
	}

	// A node that does not answer fails the statement.
	e.node.SetDown(true)
	if got, err := lightning.NewStatement(node, NewLightningPayoutKeys(e.pool)).Records(ctx, from, to); err == nil {
		t.Fatalf("got %d records from a node that is down, and no error", len(got))
	}
}
