package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestWebhookSecretIsStoredSealed: a payment's webhookSecret signs its
// webhooks, yet no read API shows it: not the payment, not its events
// (GET /events, GET /payments/{id}/events, whose data is the stored
// event), not its webhook attempts. The event and the read model hold it
// sealed.
func TestWebhookSecretIsStoredSealed(t *testing.T) {
	t.Parallel()
	p := newPaymentSetup(t, nil)
	rc := newReceiver(t, "whsec_bm90LXRvLWJlLXNlZW4tYnktcmVhZGVycw==")
	created := p.pay(t, p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":1500,"reference":"r",
		"webhookUrl":%q,"webhookSecret":%q}`, p.za, rc.URL+"/hook", rc.secret))
	id := created["id"].(string)
	mustStatus(t, p.s.call(t, http.MethodPost, "/sandbox/payments/"+id+"/deposit", p.tok, ""), http.StatusAccepted)
	p.waitFor(t, id, 20*time.Second, statusIs("success"))
	deadline := time.Now().Add(10 * time.Second)
	for len(rc.deliveries()) < 4 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := rc.deliveries(); len(got) != 4 {
		t.Fatalf("webhooks: got %d, want 4", len(got))
	}
	for _, d := range rc.deliveries() {
		if !d.Verified {
			t.Errorf("delivery %s: does not verify with the secret the partner gave", d.Type)
		}
	}

	for _, path := range []string{"/payments/" + id + "?includeStatusLog=true", "/payments/" + id + "/events",
		"/events?limit=100", "/events?limit=100&type=payment.created", "/payments/" + id + "/webhooks"} {
		r := p.s.call(t, http.MethodGet, path, p.tok, "")
		if r.Status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
		}
		if strings.Contains(string(r.Body), rc.secret) {
			t.Errorf("GET %s shows the webhook secret", path)
		}
	}
	var event, state string
	p.s.queryRow(t, `SELECT data::text FROM events WHERE stream_id = $1 AND type = 'payment.created'`, []any{id}, &event)
	p.s.queryRow(t, `SELECT state->>'webhookSecret' FROM payments WHERE id = $1`, []any{id}, &state)
	if strings.Contains(event, rc.secret) || !strings.Contains(event, `"webhookSecret":"sealed:v1:`) {
		t.Errorf("stored payment.created: want webhookSecret sealed, got %s", event)
	}
	if !strings.HasPrefix(state, "sealed:v1:") {
		t.Errorf("payments read model: webhookSecret %q, want it sealed", state)
	}
}
