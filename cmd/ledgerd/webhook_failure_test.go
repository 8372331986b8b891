package main

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ledger/ledger/eventstore/testenv"
	"github.com/ledger/ledger/workers/webhooks"
)

// TestWebhookFailureShowsOnlyAClass: in sandbox mode a webhook may be
// aimed at the service's own network; what the attempt log then shows is
// a failure class, not the start of what answered there (the NATS
// server's INFO banner), and a closed port reads like any lost connection.
func TestWebhookFailureShowsOnlyAClass(t *testing.T) {
	t.Parallel()
	p := newPaymentSetup(t, nil)
	nats, err := url.Parse(testenv.NATSURL())
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	_ = ln.Close()

	for _, tc := range []struct{ target, want string }{
		{nats.Host, webhooks.FailureInvalidResponse},
		{closed, webhooks.FailureConnectionFailed},
	} {
		id := p.pay(t, p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":500,"reference":"r","webhookUrl":"http://%s/"}`,
			p.za, tc.target))["id"].(string)
		var attempts []any
		for deadline := time.Now().Add(15 * time.Second); len(attempts) == 0; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("webhook to %s: no attempt recorded", tc.target)
			}
			r := p.s.call(t, http.MethodGet, "/payments/"+id+"/webhooks", p.tok, "")
			if strings.Contains(string(r.Body), "INFO") || strings.Contains(string(r.Body), "server_id") {
				t.Fatalf("webhook to %s: the attempt log shows the target's answer: %s", tc.target, r.Body)
			}
			attempts = mustStatus(t, r, http.StatusOK)["items"].([]any)
		}
		if a := attempts[0].(map[string]any); a["error"] != tc.want || a["statusCode"] != nil {
			t.Errorf("webhook to %s: got %v, want error %q and no status code", tc.target, a, tc.want)
		}
	}
}
