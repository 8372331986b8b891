package lightning_test

import (
	"context"
	"encoding/hex"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/workers/rails/lightning"
	"github.com/ledger/ledger/workers/rails/lightning/lndharness"
	"github.com/ledger/ledger/workers/rails/statement"
)

// knownKeys is PayoutKeys over a fixed map: the payout rail's books hold
// the one payment the test makes as a payout.
type knownKeys map[string]string

func (k knownKeys) PayoutKeys(_ context.Context, hashes []string) (map[string]string, error) {
	out := map[string]string{}
	for _, h := range hashes {
		if key, ok := k[h]; ok {
			out[h] = key
		}
	}
	return out, nil
}

// testStatement reads the service node's statement from a real lnd:
// deposit invoices the peer paid (among more than a page of invoices, most
// unpaid) and payments to the peer, one a payout of the ledger and one
// made by hand. It runs last on TestLNDAgainstRealNodes's network, since
// it asserts that nothing happens after its window.
func testStatement(t *testing.T, net *lndharness.Network, svc *lightning.LND) {
	ctx := context.Background()
	// The harness's probe payments and the earlier subtests' invoices and
	// payments are older than the window: lnd dates invoices in whole
	// seconds, so the window opens at the next one.
	from := time.Now().Truncate(time.Second).Add(time.Second)
	time.Sleep(time.Until(from))

	want := map[string]statement.Record{}
	for i := range 52 {
		inv, err := svc.CreateInvoice(ctx, lightning.InvoiceRequest{PaymentID: uuid.New(), AmountSats: int64(5_000 + i), Expiry: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		if i != 0 && i != 51 {
			continue
		}
		if p, err := net.Peer.Pay(inv.PaymentRequest); err != nil || p.Status != "SUCCEEDED" {
			t.Fatalf("peer paid the deposit invoice: %+v, %v", p, err)
		}
		want[inv.PaymentHash] = statement.Record{Direction: statement.In, Amount: decimal.NewFromInt(int64(5_000 + i)), Status: statement.Success}
	}
	keys := knownKeys{}
	for i, sats := range []int64{7_000, 8_000} {
		pr := net.Peer.AddInvoice(sats, time.Hour)
		res, err := svc.PayInvoice(ctx, pr, 10)
		if err != nil || res.Status != lightning.PaymentSucceeded {
			t.Fatalf("payment: %+v, %v", res, err)
		}
		hash := hashOf(t, pr)
		ref := hex.EncodeToString(hash[:])
		if i == 0 {
			keys[ref] = "payout-" + ref[:8]
			ref = keys[ref]
		}
		want[ref] = statement.Record{Direction: statement.Out, Amount: decimal.NewFromInt(sats), Status: statement.Success}
	}
	to := time.Now().Add(time.Second)

	got, err := lightning.NewStatement(svc, keys).Records(ctx, from, to)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("got %d records %+v, want %d", len(got), got, len(want))
	}
	for _, r := range got {
		w, ok := want[r.Ref]
		if !ok || r.Rail != "LIGHTNING" || r.Currency != "sats" || r.Direction != w.Direction || !r.Amount.Equal(w.Amount) ||
			r.Status != w.Status || r.At.Before(from) || !r.At.Before(to) {
			t.Errorf("got %+v, want %+v", r, w)
		}
	}
	// The next window holds none of them.
	if later, err := lightning.NewStatement(svc, keys).Records(ctx, to.Add(time.Second), to.Add(time.Hour)); err != nil || len(later) != 0 {
		t.Fatalf("a later window: got %+v, %v; want nothing", later, err)
	}
}
