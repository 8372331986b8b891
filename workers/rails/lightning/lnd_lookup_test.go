package lightning

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestLNDLookupInvoice(t *testing.T) {
	t.Parallel()
	f := &fakeLND{}
	n := newFakeLND(t, f)
	inv, err := n.CreateInvoice(context.Background(), lndRequest())
	if err != nil {
		t.Fatal(err)
	}
	got, err := n.LookupInvoice(context.Background(), inv.PaymentHash)
	if err != nil || got.Settled() || got.State != "OPEN" {
		t.Fatalf("open: got %+v, %v, want OPEN", got, err)
	}

	f.mu.Lock()
	raw, _ := hex.DecodeString(inv.PaymentHash)
	fi := f.invoices[[32]byte(raw)]
	fi.state = "SETTLED"
	f.invoices[[32]byte(raw)] = fi
	f.mu.Unlock()
	got, err = n.LookupInvoice(context.Background(), inv.PaymentHash)
	if want := (InvoiceState{State: "SETTLED", AmountPaidSats: 21_000, SettledAt: time.Unix(specTime.Unix()+60, 0)}); err != nil || got != want {
		t.Fatalf("settled: got %+v, %v, want %+v", got, err, want)
	}

	var rejected *RejectedError
	if _, err := n.LookupInvoice(context.Background(), strings.Repeat("ab", 32)); !errors.As(err, &rejected) {
		t.Errorf("unknown invoice: got %v, want a RejectedError", err)
	}
	if _, err := n.LookupInvoice(context.Background(), "abc"); !errors.As(err, &rejected) {
		t.Errorf("malformed hash: got %v, want a RejectedError", err)
	}
}

func TestLNDTrackPayment(t *testing.T) {
	t.Parallel()
	hash := sha256.Sum256(testPreimage[:])
	tests := []struct {
		name     string
		answer   func(w http.ResponseWriter)
		want     PaymentResult
		wantErr  error  // errors.Is
		rejected string // a RejectedError containing this
	}{
		{name: "succeeded", answer: func(w http.ResponseWriter) {
			streamResult(w, payment("SUCCEEDED", testPreimage[:], "1001", "FAILURE_REASON_NONE"))
		}, want: PaymentResult{Preimage: hex.EncodeToString(testPreimage[:]), FeeMsat: 1001, FeeSats: 2, Status: PaymentSucceeded}},
		{name: "in flight", answer: func(w http.ResponseWriter) {
			streamResult(w, payment("IN_FLIGHT", nil, "0", "FAILURE_REASON_NONE"))
		}, wantErr: ErrPaymentInFlight},
		{name: "initiated", answer: func(w http.ResponseWriter) {
			streamResult(w, payment("INITIATED", nil, "0", "FAILURE_REASON_NONE"))
		}, wantErr: ErrPaymentInFlight},
		{name: "failed", answer: func(w http.ResponseWriter) {
			streamResult(w, payment("FAILED", nil, "0", "FAILURE_REASON_TIMEOUT"))
		}, rejected: "payment failed: timeout"},
		{name: "never sent, 404", answer: func(w http.ResponseWriter) {
			streamError(w, http.StatusNotFound, "payment isn't initiated")
		}, wantErr: ErrPaymentNotFound},
		{name: "never sent, in the stream", answer: func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"error":{"code":5,"message":"payment isn't initiated","details":[]}}` + "\n"))
		}, wantErr: ErrPaymentNotFound},
		{name: "5xx is retryable", answer: func(w http.ResponseWriter) {
			grpcError(w, http.StatusServiceUnavailable, "router not started")
		}},
		// A refused lookup says nothing of the payment: never a rejection,
		// which would refund a payout an earlier call may have paid.
		{name: "403 is not a failure", answer: func(w http.ResponseWriter) {
			grpcError(w, http.StatusForbidden, "permission denied")
		}},
		{name: "400 is not a failure", answer: func(w http.ResponseWriter) {
			grpcError(w, http.StatusBadRequest, "context canceled")
		}},
		{name: "an error in the stream is not a failure", answer: func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"error":{"code":1,"message":"context canceled","details":[]}}` + "\n"))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			n := newFakeLND(t, &fakeLND{intercept: func(w http.ResponseWriter, r *http.Request) bool {
				if want := "/v2/router/track/" + base64.URLEncoding.EncodeToString(hash[:]); r.URL.Path != want {
					t.Errorf("got path %s, want %s", r.URL.Path, want)
				}
				tt.answer(w)
				return true
			}})
			got, err := n.TrackPayment(context.Background(), hash)
			var rejected *RejectedError
			switch {
			case tt.rejected != "":
				if !errors.As(err, &rejected) || !strings.Contains(err.Error(), tt.rejected) {
					t.Fatalf("got %+v, %v, want a rejection containing %q", got, err, tt.rejected)
				}
			case tt.wantErr != nil:
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("got %+v, %v, want %v", got, err, tt.wantErr)
				}
			case tt.want == PaymentResult{}:
				if err == nil || errors.As(err, &rejected) {
					t.Fatalf("got %+v, %v, want a retryable error", got, err)
				}
			default:
				if err != nil || got != tt.want {
					t.Fatalf("got %+v, %v, want %+v", got, err, tt.want)
				}
			}
		})
	}
}
