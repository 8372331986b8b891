package lightning_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ledger/ledger/workers/rails/lightning"
	"github.com/ledger/ledger/workers/rails/lightning/lndharness"
)

// TestLNDAgainstRealNodes runs the adapter against real lnd nodes on a
// regtest chain: the service's node makes deposit invoices the peer pays,
// and pays the peer's invoices, and its statement lists both. One network
// serves every subtest, since starting it takes longer than all of them.
func TestLNDAgainstRealNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd and two lnd nodes")
	}
	net := lndharness.Start(t)
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	svc := net.Service.LND(key)
	ctx := context.Background()

	t.Run("deposit invoice is idempotent, paid by the peer, and settles", func(t *testing.T) {
		req := lightning.InvoiceRequest{PaymentID: uuid.New(), AmountSats: 5_000, Description: "deposit", Expiry: time.Hour}
		inv, err := svc.CreateInvoice(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		again, err := svc.CreateInvoice(ctx, req)
		if err != nil {
			t.Fatalf("retried creation: %v", err)
		}
		if again != inv {
			t.Fatalf("retried creation answered %+v, first %+v", again, inv)
		}
		if _, err := svc.CreateInvoice(ctx, lightning.InvoiceRequest{PaymentID: req.PaymentID, AmountSats: 6_000, Expiry: time.Hour}); !isRejected(err) {
			t.Fatalf("same payment, other amount: err %v, want a rejection", err)
		}
		if s, err := svc.LookupInvoice(ctx, inv.PaymentHash); err != nil || s.State != "OPEN" {
			t.Fatalf("before payment: %+v, %v", s, err)
		}

		if p, err := net.Peer.Pay(inv.PaymentRequest); err != nil || p.Status != "SUCCEEDED" {
			t.Fatalf("peer paid the deposit invoice: %+v, %v", p, err)
		}
		s, err := svc.LookupInvoice(ctx, inv.PaymentHash)
		if err != nil || !s.Settled() || s.AmountPaidSats != 5_000 || s.SettledAt.IsZero() {
			t.Fatalf("after payment: %+v, %v", s, err)
		}
		if err := svc.CancelInvoice(ctx, inv.PaymentHash); !errors.Is(err, lightning.ErrInvoiceSettled) {
			t.Fatalf("cancel of a settled invoice: %v, want ErrInvoiceSettled", err)
		}
		if again, err := svc.CreateInvoice(ctx, req); err != nil || again.PaymentRequest != inv.PaymentRequest {
			t.Fatalf("creation retried after settlement: %+v, %v", again, err)
		}
	})

	t.Run("payout to the peer's invoice within the fee limit, then never again", func(t *testing.T) {
		pr := net.Peer.AddInvoice(7_000, time.Hour)
		hash := hashOf(t, pr)
		res, err := svc.PayInvoice(ctx, pr, 10)
		if err != nil || res.Status != lightning.PaymentSucceeded || res.FeeSats > 10 {
			t.Fatalf("payout: %+v, %v", res, err)
		}
		if pre, _ := hex.DecodeString(res.Preimage); sha256.Sum256(pre) != hash {
			t.Fatalf("preimage %s does not open %x", res.Preimage, hash)
		}
		again, err := svc.PayInvoice(ctx, pr, 10)
		if err != nil || again.Status != lightning.PaymentAlreadyPaid {
			t.Fatalf("second PayInvoice: %+v, %v; want ALREADY_PAID", again, err)
		}
		tracked, err := svc.TrackPayment(ctx, hash)
		if err != nil || tracked.Preimage != res.Preimage || tracked.FeeMsat != res.FeeMsat {
			t.Fatalf("track: %+v, %v; want %+v", tracked, err, res)
		}
		assertPaidOnce(t, net, hex.EncodeToString(hash[:]), 7_000)
	})

	t.Run("payout with no route fails with the reason, and tracks as failed", func(t *testing.T) {
		// More than the service's side of either channel holds.
		pr := net.Peer.AddInvoice(lndharness.ChannelSats*3/2, time.Hour)
		hash := hashOf(t, pr)
		_, err := svc.PayInvoice(ctx, pr, 1_000)
		var re *lightning.RejectedError
		if !errors.As(err, &re) {
			t.Fatalf("payout beyond liquidity: %v, want a rejection", err)
		}
		t.Logf("lnd's reason: %s", re.Reason)
		if _, err := svc.TrackPayment(ctx, hash); !isRejected(err) {
			t.Fatalf("track of the failed payout: %v, want a rejection", err)
		}
		if state, paid := net.Peer.Received(hex.EncodeToString(hash[:])); state != "OPEN" || paid != 0 {
			t.Fatalf("peer's invoice %s with %d sats paid", state, paid)
		}
	})

	t.Run("payout to an expired invoice is rejected", func(t *testing.T) {
		pr := net.Peer.AddInvoice(1_000, time.Second)
		terms, err := lightning.DecodeBolt11(pr)
		if err != nil {
			t.Fatal(err)
		}
		waitUntil(t, "the invoice to expire", func() bool { return time.Now().After(terms.ExpiresAt()) })
		if _, err := svc.PayInvoice(ctx, pr, 10); !isRejected(err) {
			t.Fatalf("payout to an expired invoice: %v, want a rejection", err)
		}
	})

	t.Run("payout whose answer is lost is found by hash, and never paid twice", func(t *testing.T) {
		pr := net.Peer.AddInvoice(3_000, time.Hour)
		hash := hashOf(t, pr)
		hexHash := hex.EncodeToString(hash[:])
		if _, err := svc.TrackPayment(ctx, hash); !errors.Is(err, lightning.ErrPaymentNotFound) {
			t.Fatalf("track before any attempt: %v, want ErrPaymentNotFound", err)
		}
		// The caller goes away once lnd has the payment, as ledgerd killed
		// between SendPayment and recording its outcome would.
		callCtx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { _, err := svc.PayInvoice(callCtx, pr, 10); done <- err }()
		waitUntil(t, "the service's node to record the payment", func() bool { return len(net.Service.Payments(hexHash)) > 0 })
		cancel()
		t.Logf("first attempt, its caller gone: %v", <-done)

		var res lightning.PaymentResult
		deadline := time.Now().Add(time.Minute)
		for {
			var err error
			res, err = svc.TrackPayment(ctx, hash)
			if err == nil {
				break
			}
			if !errors.Is(err, lightning.ErrPaymentInFlight) || time.Now().After(deadline) {
				t.Fatalf("track after the lost answer: %v", err)
			}
			time.Sleep(100 * time.Millisecond)
		}
		if res.Status != lightning.PaymentSucceeded || res.Preimage == "" {
			t.Fatalf("tracked: %+v", res)
		}
		again, err := svc.PayInvoice(ctx, pr, 10)
		if err != nil || again.Status != lightning.PaymentAlreadyPaid {
			t.Fatalf("PayInvoice retried: %+v, %v; want ALREADY_PAID", again, err)
		}
		assertPaidOnce(t, net, hexHash, 3_000)
	})

	t.Run("deposit invoice that expires unpaid is canceled and cannot be paid", func(t *testing.T) {
		req := lightning.InvoiceRequest{PaymentID: uuid.New(), AmountSats: 2_000, Expiry: 2 * time.Second}
		inv, err := svc.CreateInvoice(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		// lnd cancels an invoice once its expiry passes.
		waitUntil(t, "lnd to cancel the expired invoice", func() bool {
			s, err := svc.LookupInvoice(ctx, inv.PaymentHash)
			if err != nil {
				t.Fatal(err)
			}
			return s.State == "CANCELED"
		})
		if err := svc.CancelInvoice(ctx, inv.PaymentHash); err != nil {
			t.Fatalf("cancel of a canceled invoice: %v", err)
		}
		if p, err := net.Peer.Pay(inv.PaymentRequest); err == nil && p.Status == "SUCCEEDED" {
			t.Fatalf("peer paid an expired invoice: %+v", p)
		}
		if _, err := svc.CreateInvoice(ctx, req); !isRejected(err) {
			t.Fatalf("creation retried after expiry: %v, want a rejection", err)
		}
	})

	t.Run("an open invoice canceled before expiry cannot be paid", func(t *testing.T) {
		inv, err := svc.CreateInvoice(ctx, lightning.InvoiceRequest{PaymentID: uuid.New(), AmountSats: 1_500, Expiry: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		if err := svc.CancelInvoice(ctx, inv.PaymentHash); err != nil {
			t.Fatal(err)
		}
		if s, err := svc.LookupInvoice(ctx, inv.PaymentHash); err != nil || s.State != "CANCELED" {
			t.Fatalf("after cancel: %+v, %v", s, err)
		}
		if p, err := net.Peer.Pay(inv.PaymentRequest); err == nil && p.Status == "SUCCEEDED" {
			t.Fatalf("peer paid a canceled invoice: %+v", p)
		}
	})

	t.Run("hashes the node does not know", func(t *testing.T) {
		unknown := sha256.Sum256([]byte(uuid.NewString()))
		if _, err := svc.LookupInvoice(ctx, hex.EncodeToString(unknown[:])); !isRejected(err) {
			t.Fatalf("lookup of an unknown invoice: %v, want a rejection", err)
		}
		if err := svc.CancelInvoice(ctx, hex.EncodeToString(unknown[:])); !isRejected(err) {
			t.Fatalf("cancel of an unknown invoice: %v, want a rejection", err)
		}
		if _, err := svc.TrackPayment(ctx, unknown); !errors.Is(err, lightning.ErrPaymentNotFound) {
			t.Fatalf("track of an unknown payment: %v, want ErrPaymentNotFound", err)
		}
	})
	t.Run("statement holds the window's paid deposits and payments, payouts by their keys", func(t *testing.T) {
		testStatement(t, net, svc)
	})
}

// waitUntil polls cond for up to a minute.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func isRejected(err error) bool {
	var re *lightning.RejectedError
	return errors.As(err, &re)
}

func hashOf(t *testing.T, pr string) [32]byte {
	t.Helper()
	terms, err := lightning.DecodeBolt11(pr)
	if err != nil {
		t.Fatal(err)
	}
	return terms.PaymentHash
}

// assertPaidOnce checks both ends: the service's node made one successful
// payment to the hash, and the peer's invoice took exactly its amount.
func assertPaidOnce(t *testing.T, net *lndharness.Network, hash string, sats int64) {
	t.Helper()
	if got := net.Service.Payments(hash); got["SUCCEEDED"] != 1 || len(got) != 1 {
		t.Fatalf("service's payments to %s: %v, want one SUCCEEDED", hash, got)
	}
	if state, paid := net.Peer.Received(hash); state != "SETTLED" || paid != sats {
		t.Fatalf("peer's invoice %s with %d sats paid, want SETTLED with %d", state, paid, sats)
	}
}
