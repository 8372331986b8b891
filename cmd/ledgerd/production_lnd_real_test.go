package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ledger/ledger/workers/rails/lightning"
	"github.com/ledger/ledger/workers/rails/lightning/lndharness"
)

// realDepositExpires: a payment whose deposit invoice nobody pays expires
// with it, against real lnd. Its validity (LEDGER_VALIDITY lightning=3s)
// is the invoice's expiry at the node; once it passes, the payment is
// expired with its webhook, lnd reports the invoice canceled, and the
// payer's node can no longer pay it. ledgerd runs as a process, which
// trusts the https webhook receiver through SSL_CERT_FILE.
func realDepositExpires(t *testing.T, net *lndharness.Network, env map[string]string) {
	env["LEDGER_VALIDITY"] = "lightning=3s"
	p := newPaymentSetup(t, env)
	rc, cert := newTLSReceiver(t, "whsec_c2VjcmV0LWtleS1mb3ItdGVzdHM=")
	env["SSL_CERT_FILE"], env["LEDGER_WEBHOOK_ALLOW_PRIVATE"] = cert, "true"
	p.s = asProcess(t, p.s, env)

	got := p.pay(t, p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":500,"reference":"r","webhookUrl":%q,"webhookSecret":%q}`,
		p.za, rc.URL+"/hook", rc.secret))
	id := got["id"].(string)
	var inv struct{ PaymentRequest, PaymentHash string }
	mustDecode(t, []byte(got["lightningInvoice"].(string)), &inv)
	terms, err := lightning.DecodeBolt11(inv.PaymentRequest)
	if err != nil || terms.Expiry != 3*time.Second || got["validityDuration"] != 3.0 {
		t.Fatalf("the node's invoice expires %v after its timestamp (%v), validityDuration %v; want both 3 s",
			terms.Expiry, err, got["validityDuration"])
	}
	if state, _ := net.Service.Received(inv.PaymentHash); state != "OPEN" {
		t.Fatalf("the service's node has the deposit invoice %s, want OPEN", state)
	}

	expired := p.waitFor(t, id, 30*time.Second, statusIs("expired"))
	if s := statuses(expired); !slices.Equal(s, []string{"created", "expired"}) {
		t.Errorf("statusLogs: got %v, want created, expired", s)
	}
	var expiresAt time.Time
	p.s.queryRow(t, `SELECT (state->>'expiresAt')::timestamptz FROM payments WHERE id = $1`, []any{id}, &expiresAt)
	if d := expiresAt.Sub(terms.ExpiresAt()); d <= -time.Second || d >= time.Second {
		t.Errorf("the payment expires at %v, its invoice at %v: want them within a second", expiresAt, terms.ExpiresAt())
	}
	waitUntil(t, "the expired webhook", func() bool { return len(rc.deliveries()) >= 2 })
	if d := rc.deliveries(); len(d) != 2 || d[0].Type != "payment.created" || d[1].Type != "payment.expired" || !d[1].Verified {
		t.Errorf("webhooks: got %+v, want created then expired, signed", d)
	}
	if state, _ := net.Service.Received(inv.PaymentHash); state != "CANCELED" {
		t.Errorf("the service's node has the expired payment's invoice %s, want CANCELED", state)
	}
	pay, err := net.Peer.Pay(inv.PaymentRequest)
	if err == nil && pay.Status == "SUCCEEDED" {
		t.Fatalf("the peer paid the expired payment's invoice: %+v", pay)
	}
	t.Logf("the peer's payment of the expired invoice: %+v, %v", pay, err)
}

// realPayoutSurvivesKill: ledgerd is killed (SIGKILL) between lnd
// accepting its SendPayment and the payout's event: the payee's node holds
// the payout's HTLC (a hold invoice handed out by its LNURL-pay service),
// so the payment is in flight, with no outcome anyone could record. The
// next ledgerd looks the payment up by its hash and finds it in flight:
// it sends nothing and asks again later. Once the payee takes the payment,
// it finds it succeeded and records it. The payment succeeds once, and
// the payee was asked for one invoice and paid it once.
func realPayoutSurvivesKill(t *testing.T, net *lndharness.Network, env map[string]string) {
	payee := net.Peer.HeldPayee()
	p := newPaymentSetup(t, env)
	p.btc = mustStatus(t, p.s.call(t, http.MethodPost, "/merchants", p.tok,
		fmt.Sprintf(`{"name":"Peer","country":"BTC","lnurl":%q}`, payee.LNURL)), http.StatusCreated)["id"].(string)
	env["SSL_CERT_FILE"], env["LEDGER_LNURL_ALLOW_PRIVATE"] = payee.CertFile, "true"
	p.s = asProcess(t, p.s, env)

	bank := p.payByBank(t, "Europe")
	wantOutcome(t, p.s.importCamt(t, camtFile(t, credit{"E-KILL", bank.Amount.StringFixed(2), "EUR", bank.Reference, "FR7630006000011234567890189", ""})),
		"deposited", "")
	var hash string
	waitUntil(t, "the payee's node to hold the payout", func() bool {
		if hashes := payee.Hashes(); len(hashes) > 0 {
			hash = hashes[0]
			state, _ := net.Peer.Received(hash)
			return state == "ACCEPTED"
		}
		return false
	})
	if got := net.Service.Payments(hash); got["IN_FLIGHT"] != 1 || len(got) != 1 {
		t.Fatalf("the service's payments to %s: %v, want one IN_FLIGHT", hash, got)
	}
	p.s.kill()
	var before, payout string
	p.s.queryRow(t, `SELECT p.status, l.status FROM payments p JOIN lightning_payouts l ON l.payment_id = p.id WHERE p.id = $1`,
		[]any{bank.ID}, &before, &payout)
	if before != "transferring" || payout != "pending" {
		t.Fatalf("after the kill: payment %s, payout %s; want transferring and pending, no outcome recorded", before, payout)
	}

	// The transferring message reaches the new process once the dead one's
	// hold on it lapses (its nak's delay, at most AckWait).
	p.s = startProcess(t, onStore(p.s, env))
	for deadline := time.Now().Add(90 * time.Second); !strings.Contains(p.s.logs.String(), lightning.ErrPaymentInFlight.Error()); {
		if time.Now().After(deadline) {
			t.Fatal("the new ledgerd did not find the payout in flight within 90 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := net.Service.Payments(hash); got["IN_FLIGHT"] != 1 || len(got) != 1 || len(payee.Hashes()) != 1 {
		t.Fatalf("the service's payments to %s: %v, of %d invoices; want one IN_FLIGHT of one", hash, got, len(payee.Hashes()))
	}
	payee.Settle(hash)
	got := p.waitFor(t, bank.ID, 90*time.Second, statusIs("success"))
	if s := statuses(got); !slices.Equal(s, []string{"created", "deposited", "transferring", "success"}) {
		t.Errorf("statusLogs: got %v, want created, deposited, transferring, success", s)
	}
	var successes int
	p.s.queryRow(t, `SELECT count(*) FROM events WHERE stream_id = $1 AND type = 'payment.success'`, []any{bank.ID}, &successes)
	var status, preimage string
	p.s.queryRow(t, `SELECT status, preimage FROM lightning_payouts WHERE payment_id = $1`, []any{bank.ID}, &status, &preimage)
	pre, _ := hex.DecodeString(preimage)
	if sum := sha256.Sum256(pre); successes != 1 || status != "paid" || hex.EncodeToString(sum[:]) != hash {
		t.Errorf("got %d payment.success events, payout %s with preimage %q; want 1, paid with the preimage of %s",
			successes, status, preimage, hash)
	}
	if got := net.Service.Payments(hash); got["SUCCEEDED"] != 1 || len(got) != 1 {
		t.Errorf("the service's payments to %s: %v, want one SUCCEEDED", hash, got)
	}
	if state, paid := net.Peer.Received(hash); state != "SETTLED" || paid != 50_000 || len(payee.Hashes()) != 1 {
		t.Errorf("the payee's invoice %s with %d sats paid, of %d invoices; want one, SETTLED with 50000", state, paid, len(payee.Hashes()))
	}
}
