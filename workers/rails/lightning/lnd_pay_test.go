package lightning

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"testing"
)

// testPreimage opens the payment hash of testInvoice.
var testPreimage = [32]byte{0x11, 0x22}

func testInvoice(t *testing.T, msat uint64) string {
	t.Helper()
	pr, err := Encode(Bolt11{Network: Regtest, AmountMsat: msat, Timestamp: specTime,
		PaymentHash: sha256.Sum256(testPreimage[:]), Description: "payout"}, specKey(t))
	if err != nil {
		t.Fatal(err)
	}
	return pr
}

// payAnswer makes the fake answer every send with write.
func payAnswer(write func(w http.ResponseWriter)) func(http.ResponseWriter, [32]byte) bool {
	return func(w http.ResponseWriter, _ [32]byte) bool {
		write(w)
		return true
	}
}

func TestLNDPayInvoice(t *testing.T) {
	t.Parallel()
	succeeded := PaymentResult{Preimage: hex.EncodeToString(testPreimage[:]), FeeMsat: 1001, FeeSats: 2, Status: PaymentSucceeded}
	tests := []struct {
		name     string
		pay      func(http.ResponseWriter, [32]byte) bool
		want     PaymentResult
		wantErr  string
		rejected bool
		inFlight bool
	}{
		{name: "succeeded", want: succeeded},
		{name: "succeeded after an in-flight update", pay: payAnswer(func(w http.ResponseWriter) {
			streamResult(w, payment("IN_FLIGHT", nil, "0", "FAILURE_REASON_NONE"),
				payment("SUCCEEDED", testPreimage[:], "1001", "FAILURE_REASON_NONE"))
		}), want: succeeded},
		{name: "no fee", pay: payAnswer(func(w http.ResponseWriter) {
			streamResult(w, payment("SUCCEEDED", testPreimage[:], "0", "FAILURE_REASON_NONE"))
		}), want: PaymentResult{Preimage: succeeded.Preimage, Status: PaymentSucceeded}},
		{name: "already paid, stream error", pay: payAnswer(func(w http.ResponseWriter) {
			streamError(w, http.StatusConflict, "invoice is already paid")
		}), want: PaymentResult{Status: PaymentAlreadyPaid}},
		{name: "already paid, unary error", pay: payAnswer(func(w http.ResponseWriter) {
			grpcError(w, http.StatusConflict, "invoice is already paid")
		}), want: PaymentResult{Status: PaymentAlreadyPaid}},
		{name: "in transition", pay: payAnswer(func(w http.ResponseWriter) {
			streamError(w, http.StatusConflict, "payment is in transition")
		}), wantErr: "in flight", inFlight: true},
		{name: "initiated, no HTLC yet", pay: payAnswer(func(w http.ResponseWriter) {
			streamError(w, http.StatusConflict, "payment already exists")
		}), wantErr: "in flight", inFlight: true},
		{name: "failed: no route", pay: payAnswer(func(w http.ResponseWriter) {
			streamResult(w, payment("FAILED", make([]byte, 32), "0", "FAILURE_REASON_NO_ROUTE"))
		}), wantErr: "lnd pay: rejected: payment failed: no_route", rejected: true},
		{name: "invalid argument", pay: payAnswer(func(w http.ResponseWriter) {
			streamError(w, http.StatusBadRequest, "payment hash must be exactly 32 bytes")
		}), wantErr: "32 bytes", rejected: true},
		{name: "expired invoice, as lnd answers it", pay: payAnswer(func(w http.ResponseWriter) {
			streamError(w, http.StatusInternalServerError, "invoice expired. Valid until 2026-11-29 05:29:00 +0000 UTC")
		}), wantErr: "lnd pay: rejected: invoice expired", rejected: true},
		{name: "5xx is retryable", pay: payAnswer(func(w http.ResponseWriter) {
			streamError(w, http.StatusServiceUnavailable, "router not started")
		}), wantErr: "lnd answered 503: router not started"},
		{name: "error mid-stream is retryable", pay: payAnswer(func(w http.ResponseWriter) {
			streamResult(w, payment("IN_FLIGHT", nil, "0", "FAILURE_REASON_NONE"))
			_, _ = w.Write([]byte(`{"error":{"code":1,"message":"context canceled","details":[]}}` + "\n"))
		}), wantErr: "lnd answered 200: context canceled"},
		{name: "stream ends before the outcome", pay: payAnswer(func(w http.ResponseWriter) {
			streamResult(w, payment("IN_FLIGHT", nil, "0", "FAILURE_REASON_NONE"))
		}), wantErr: "stream ended before the outcome"},
		{name: "preimage does not open the hash", pay: payAnswer(func(w http.ResponseWriter) {
			streamResult(w, payment("SUCCEEDED", make([]byte, 32), "0", "FAILURE_REASON_NONE"))
		}), wantErr: "does not hash to"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			n := newFakeLND(t, &fakeLND{pay: tt.pay})
			got, err := n.PayInvoice(context.Background(), testInvoice(t, 21_000), 10)
			if tt.wantErr == "" {
				if err != nil || got != tt.want {
					t.Fatalf("got %+v, %v, want %+v", got, err, tt.want)
				}
				return
			}
			var rejected *RejectedError
			switch {
			case err == nil || !strings.Contains(err.Error(), tt.wantErr):
				t.Fatalf("got %+v, %v, want an error containing %q", got, err, tt.wantErr)
			case errors.As(err, &rejected) != tt.rejected:
				t.Errorf("got %v, want rejected %t", err, tt.rejected)
			case errors.Is(err, ErrPaymentInFlight) != tt.inFlight:
				t.Errorf("got %v, want in flight %t", err, tt.inFlight)
			}
		})
	}
}

// TestLNDPayInvoiceTwice retries a payout that succeeded: lnd refuses to
// pay the hash again, and the retry learns that it was paid.
func TestLNDPayInvoiceTwice(t *testing.T) {
	t.Parallel()
	f := &fakeLND{}
	n := newFakeLND(t, f)
	pr := testInvoice(t, 21_000)
	first, err := n.PayInvoice(context.Background(), pr, 10)
	if err != nil || first.Status != PaymentSucceeded {
		t.Fatalf("first: got %+v, %v, want %s", first, err, PaymentSucceeded)
	}
	second, err := n.PayInvoice(context.Background(), strings.ToUpper(pr), 10)
	if err != nil || second.Status != PaymentAlreadyPaid {
		t.Fatalf("second: got %+v, %v, want %s", second, err, PaymentAlreadyPaid)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.sends != 2 {
		t.Errorf("got %d sends, want 2", f.sends)
	}
}

// TestLNDPayInvoiceRefuses covers requests refused before they reach lnd.
func TestLNDPayInvoiceRefuses(t *testing.T) {
	t.Parallel()
	f := &fakeLND{}
	n := newFakeLND(t, f)
	tests := []struct {
		name, pr string
		maxFee   int64
		want     string
	}{
		{"negative fee limit", testInvoice(t, 21_000), -1, "negative fee limit"},
		{"not an invoice", "lnbcrt1garbage", 10, "bolt11"},
		{"no amount", testInvoice(t, 0), 10, "names no amount"},
	}
	for _, tt := range tests {
		_, err := n.PayInvoice(context.Background(), tt.pr, tt.maxFee)
		var rejected *RejectedError
		if !errors.As(err, &rejected) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want a RejectedError containing %q", tt.name, err, tt.want)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.sends != 0 {
		t.Errorf("got %d sends, want none", f.sends)
	}
}
