package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ledger/ledger/workers/webhooks"
)

// secret is a Standard Webhooks secret: whsec_ and 24 bytes in base64.
const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// TestReceiver sends the receiver requests signed by the ledger's own signer
// (workers/webhooks) and checks it takes exactly the genuine, fresh ones.
func TestReceiver(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_795_429_022, 0)
	body := []byte(`{"id":"01a207e8-bb92-7f11-9fcf-31b155edab88","type":"payment.success"}`)
	sign := func(at time.Time, b []byte) string {
		sig, err := webhooks.Sign(secret, "01a207e8-bb92-7f11-9fcf-31b155edab88", at, b)
		if err != nil {
			t.Fatal(err)
		}
		return sig
	}
	for _, tc := range []struct {
		name       string
		at         time.Time // the webhook-timestamp sent
		signature  string
		body       []byte
		wantStatus int
	}{
		{"genuine", now, sign(now, body), body, http.StatusNoContent},
		{"one of several signatures", now.Add(-4 * time.Minute), "v1,b2xk " + sign(now.Add(-4*time.Minute), body), body, http.StatusNoContent},
		{"tampered body", now, sign(now, body), bytes.Replace(body, []byte("success"), []byte("failed!"), 1), http.StatusUnauthorized},
		{"stale timestamp", now.Add(-6 * time.Minute), sign(now.Add(-6*time.Minute), body), body, http.StatusUnauthorized},
		{"timestamp not the signed one", now, sign(now.Add(-time.Second), body), body, http.StatusUnauthorized},
		{"unsigned", now, "", body, http.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			key, err := signingKey(secret)
			if err != nil {
				t.Fatal(err)
			}
			var printed bytes.Buffer
			srv := httptest.NewServer(receiver(key, func() time.Time { return now }, &printed))
			defer srv.Close()
			req, err := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("webhook-id", "01a207e8-bb92-7f11-9fcf-31b155edab88")
			req.Header.Set("webhook-timestamp", strconv.FormatInt(tc.at.Unix(), 10))
			req.Header.Set("webhook-signature", tc.signature)
			resp, err := srv.Client().Do(req) // its own transport: another subtest's srv.Close closes DefaultTransport's connections
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("status: got %d, want %d", resp.StatusCode, tc.wantStatus)
			}
			if accepted := strings.Contains(printed.String(), "payment.success"); accepted != (tc.wantStatus == http.StatusNoContent) {
				t.Fatalf("printed %q: got accepted %v, want %v", printed.String(), accepted, !accepted)
			}
		})
	}
}
