package main

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"
)

// TestWebhookAttemptsStayOutOfTheHistory: a payment's webhook attempts, a
// failed one retried and the delivered ones, are listed by GET
// /payments/{id}/webhooks, while its history holds its status events alone:
// how often a receiver was called is no event of the ledger.
func TestWebhookAttemptsStayOutOfTheHistory(t *testing.T) {
	t.Parallel()
	p := newPaymentSetup(t, map[string]string{"LEDGER_WEBHOOK_RETRY": "100ms"})
	rc := newReceiver(t, "whsec_c2VjcmV0", http.StatusServiceUnavailable)
	id := p.pay(t, p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":500,"reference":"r","webhookUrl":%q,"webhookSecret":%q}`,
		p.za, rc.URL, rc.secret))["id"].(string)
	mustStatus(t, p.s.call(t, http.MethodPost, "/sandbox/payments/"+id+"/deposit", p.tok, ""), http.StatusAccepted)
	p.waitFor(t, id, 20*time.Second, statusIs("success"))
	p.waitWebhooksDone(t, id)

	var attempts []string
	for _, a := range mustStatus(t, p.s.call(t, http.MethodGet, "/payments/"+id+"/webhooks", p.tok, ""), http.StatusOK)["items"].([]any) {
		a := a.(map[string]any)
		attempts = append(attempts, fmt.Sprintf("%v %v", a["type"], a["statusCode"]))
	}
	if want := []string{"payment.created 503", "payment.created 200", "payment.deposited 200", "payment.transferring 200",
		"payment.success 200"}; !slices.Equal(attempts, want) {
		t.Errorf("GET /payments/{id}/webhooks: got %v, want %v", attempts, want)
	}
	var types []string
	for _, e := range p.events(t, p.tok, "/payments/"+id+"/events").Items {
		types = append(types, e.Type)
	}
	if want := []string{"ledger.payment.created.v1", "ledger.payment.deposited.v1", "ledger.payment.transferring.v1",
		"ledger.payment.success.v1"}; !slices.Equal(types, want) {
		t.Errorf("payment history: got %v, want its status events alone", types)
	}
}
