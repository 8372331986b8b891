package main

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ledger/ledger/workers/rails/lightning/lndtest"
	"github.com/ledger/ledger/workers/rails/paystack"
	"github.com/ledger/ledger/workers/rails/paystack/paystacktest"
)

const paystackTestKey = "sk_test_ledgerd"

// TestProductionPaystackPayout: production ledgerd pays a Lightning-funded
// payment out to a South African bank merchant through Paystack: the banks
// merchants may name are Paystack's, the transfer's reference is the
// payment id, its webhook moves the payment to success, and a reversal
// after it becomes payment.payout_reversed. A badly signed webhook is
// refused and changes nothing.
func TestProductionPaystackPayout(t *testing.T) {
	t.Parallel()
	node := lndtest.NewNode(t)
	fake := paystacktest.NewServer(t, paystackTestKey)
	fake.SettleWith("success")
	env := productionLightning(t, node)
	env["LEDGER_PAYSTACK_SECRET_KEY"], env["LEDGER_PAYSTACK_BASE_URL"] = paystackTestKey, fake.URL()
	p := newPaymentSetup(t, env)
	fake.SetWebhookURL(p.s.URL + paystack.WebhookPath)

	var banks struct{ Items []struct{ Name, Code string } }
	mustDecode(t, mustOK(t, p.s.call(t, http.MethodGet, "/utils/banks?country=SouthAfrica", p.tok, "")), &banks)
	if len(banks.Items) != len(paystacktest.Banks["south africa"]) || banks.Items[0].Name != "Capitec Bank" {
		t.Errorf("GET /utils/banks: got %+v, want Paystack's South African banks", banks.Items)
	}
	r := p.s.call(t, http.MethodPost, "/merchants", p.tok, `{"name":"X","country":"SouthAfrica","bankName":"ABSA Bank","accountNumber":"1234567890"}`)
	mustFieldError(t, mustProblem(t, r, http.StatusBadRequest, "unknown_bank"), "bankName")
	checkRailReady(t, p.s, "paystack")

	got := p.pay(t, p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":500,"reference":"r"}`, p.za))
	id := got["id"].(string)
	var inv struct{ PaymentHash string }
	mustDecode(t, []byte(got["lightningInvoice"].(string)), &inv)
	node.Settle(inv.PaymentHash, time.Now())
	got = p.waitFor(t, id, 20*time.Second, statusIs("success"))
	if s := statuses(got); !slices.Equal(s, []string{"created", "deposited", "transferring", "success"}) {
		t.Errorf("statusLogs: got %v", s)
	}
	tr, ok := fake.Transfer(id)
	if !ok || tr.Currency != "ZAR" || tr.Amount != 50000 || fake.Transfers() != 1 {
		t.Fatalf("got transfer %+v (%d in all), want one of 50000 ZAR cents under the payment id", tr, fake.Transfers())
	}

	body := paystacktest.WebhookBody("transfer.reversed", tr)
	if code := fake.Post(body, paystacktest.Sign("sk_test_forged", body)); code != http.StatusUnauthorized {
		t.Errorf("forged webhook: got %d, want 401", code)
	}
	if !strings.Contains(p.s.logs.String(), "paystack webhook: bad signature") {
		t.Error("the forged webhook is not logged")
	}
	fake.Settle(id, "reversed")
	deadline := time.Now().Add(10 * time.Second)
	for !slices.Contains(eventTypes(t, p, id), "ledger.payment.payout_reversed.v1") {
		if time.Now().After(deadline) {
			t.Fatalf("no payment.payout_reversed: events %v", eventTypes(t, p, id))
		}
		time.Sleep(20 * time.Millisecond)
	}
	got = p.waitFor(t, id, time.Second, statusIs("success"))
	if !strings.HasPrefix(got["statusLog"].(string), "Payout reversed") {
		t.Errorf("statusLog: got %q", got["statusLog"])
	}
	if !strings.Contains(p.s.logs.String(), "a successful payout was reversed") {
		t.Error("the reversal raised no operator alert in the log")
	}
	if types := eventTypes(t, p, id); len(types) != 5 {
		t.Errorf("events: got %v, want the reversal once", types)
	}
}

// eventTypes lists a payment's event types in order.
func eventTypes(t *testing.T, p paymentSetup, id string) []string {
	t.Helper()
	var events struct{ Items []struct{ Type string } }
	mustDecode(t, mustOK(t, p.s.call(t, http.MethodGet, "/payments/"+id+"/events", p.tok, "")), &events)
	var out []string
	for _, e := range events.Items {
		out = append(out, e.Type)
	}
	return out
}

func mustOK(t *testing.T, r response) []byte {
	t.Helper()
	if r.Status != http.StatusOK {
		t.Fatalf("got %d %s, want 200", r.Status, r.Body)
	}
	return r.Body
}

// TestPaystackConfiguration: ledgerd refuses to start with the Paystack
// rail half configured, and reads the key from a file.
func TestPaystackConfiguration(t *testing.T) {
	t.Parallel()
	keyFile := settingFile(t, "paystack.key", []byte(paystackTestKey+"\n"))
	load := func(env map[string]string) (config, error) {
		env["LEDGER_MASTER_KEY_FILE"] = masterKey
		return loadEnv(env)
	}
	for name, env := range map[string]map[string]string{
		"base URL without a key": {"LEDGER_MODE": "production", "LEDGER_PAYSTACK_BASE_URL": "https://api.paystack.co"},
		"key twice":              {"LEDGER_MODE": "production", "LEDGER_PAYSTACK_SECRET_KEY": "sk", "LEDGER_PAYSTACK_SECRET_KEY_FILE": keyFile},
		"in sandbox":             {"LEDGER_PAYSTACK_SECRET_KEY": "sk"},
		"bad URL":                {"LEDGER_MODE": "production", "LEDGER_PAYSTACK_SECRET_KEY": "sk", "LEDGER_PAYSTACK_BASE_URL": "api.paystack.co"},
	} {
		if _, err := load(env); err == nil || !strings.Contains(err.Error(), "PAYSTACK") {
			t.Errorf("%s: got %v, want a LEDGER_PAYSTACK_* error", name, err)
		}
	}
	cfg, err := load(map[string]string{"LEDGER_MODE": "production", "LEDGER_PAYSTACK_SECRET_KEY_FILE": keyFile})
	if err != nil {
		t.Fatal(err)
	}
	key, err := cfg.paystackKey()
	if err != nil || key != paystackTestKey || cfg.PaystackBaseURL != paystack.DefaultBaseURL {
		t.Fatalf("got key %q, %v, base %q; want the file's key and the public API", key, err, cfg.PaystackBaseURL)
	}
}

// TestProductionBankPayoutWithoutPaystack: in production with no Paystack
// key, a payment to a bank merchant is refused before anything is created.
func TestProductionBankPayoutWithoutPaystack(t *testing.T) {
	t.Parallel()
	p := newPaymentSetup(t, map[string]string{"LEDGER_MODE": "production"})
	before := p.s.countEvents(t)
	for _, m := range []string{p.za, p.keBank, p.ng} {
		r := p.s.call(t, http.MethodPost, "/payments", p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":5000,"reference":"r"}`, m))
		var pr problem
		if pr = mustProblem(t, r, http.StatusServiceUnavailable, "rail_unavailable"); !strings.Contains(pr.Detail, "bank") {
			t.Errorf("detail: got %q", pr.Detail)
		}
	}
	if after := p.s.countEvents(t); after != before {
		t.Errorf("events: got %d more, want none", after-before)
	}
	var ready map[string]any
	mustDecode(t, mustOK(t, p.s.get(t, "/readyz")), &ready)
	if _, ok := ready["rails"]; ok {
		t.Errorf("GET /readyz: got %v, want no rails reported", ready)
	}
}

// TestProductionPaystackRecoveryAfterRestart: ledgerd asks Paystack for the
// transfer, which stays pending, and stops before it can record an
// outcome; Paystack completes it while no process runs and its webhook
// never comes. The next process's stalled-payment sweep (at its start,
// the payment having not moved for LEDGER_STALLED_AFTER) verifies the
// transfer by reference and records the success: one transfer, never a
// second POST.
func TestProductionPaystackRecoveryAfterRestart(t *testing.T) {
	t.Parallel()
	node := lndtest.NewNode(t)
	fake := paystacktest.NewServer(t, paystackTestKey)
	fake.SetDelivery(paystacktest.Never)
	env := productionLightning(t, node)
	env["LEDGER_PAYSTACK_SECRET_KEY"], env["LEDGER_PAYSTACK_BASE_URL"] = paystackTestKey, fake.URL()
	p := newPaymentSetup(t, env)
	env = onStore(p.s, env)

	got := p.pay(t, p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":500,"reference":"r"}`, p.za))
	id := got["id"].(string)
	var inv struct{ PaymentHash string }
	mustDecode(t, []byte(got["lightningInvoice"].(string)), &inv)
	node.Settle(inv.PaymentHash, time.Now())
	moved, err := time.Parse(time.RFC3339Nano, p.waitFor(t, id, 20*time.Second, statusIs("transferring"))["updatedAt"].(string))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for fake.Transfers() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if err := p.s.stop(); err != nil {
		t.Fatal(err)
	}
	fake.Settle(id, "success")

	env["LEDGER_STALLED_AFTER"] = "1s"
	time.Sleep(time.Until(moved.Add(1100 * time.Millisecond))) // stalled by then: the new process's first sweep takes it
	p.s = startServer(t, env)
	got = p.waitFor(t, id, 60*time.Second, statusIs("success"))
	if fake.Posts() != 1 || fake.Transfers() != 1 || got["amountSettled"] != 500.0 {
		t.Fatalf("got %d posts, %d transfers and %v settled; want one of each and 500", fake.Posts(), fake.Transfers(), got["amountSettled"])
	}
}
