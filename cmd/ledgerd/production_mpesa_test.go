package main

import (
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ledger/ledger/workers/rails/lightning/lndtest"
	"github.com/ledger/ledger/workers/rails/mpesa"
	"github.com/ledger/ledger/workers/rails/mpesa/mpesatest"
	"github.com/ledger/ledger/workers/rails/paystack/paystacktest"
)

var mpesaCreds = mpesatest.Credentials{ConsumerKey: "ck_ledgerd", ConsumerSecret: "cs_ledgerd", ShortCode: "174379",
	PassKey: "bfb279f9aa9bdbcf158e97dd71a467cd", B2CShortCode: "600997", Initiator: "ledgerapi", InitiatorPassword: "Safaricom999!"}

// mpesaEnv is the LEDGER_MPESA_* settings of fake, secrets in files.
func mpesaEnv(t *testing.T, fake *mpesatest.Server) map[string]string {
	t.Helper()
	return map[string]string{"LEDGER_MPESA_CONSUMER_KEY": mpesaCreds.ConsumerKey,
		"LEDGER_MPESA_CONSUMER_SECRET_FILE": settingFile(t, "secret", []byte(mpesaCreds.ConsumerSecret+"\n")),
		"LEDGER_MPESA_SHORTCODE":            mpesaCreds.ShortCode, "LEDGER_MPESA_PASSKEY_FILE": settingFile(t, "passkey", []byte(mpesaCreds.PassKey)),
		"LEDGER_MPESA_B2C_SHORTCODE": mpesaCreds.B2CShortCode, "LEDGER_MPESA_INITIATOR": mpesaCreds.Initiator,
		"LEDGER_MPESA_INITIATOR_PASSWORD_FILE": settingFile(t, "initiator", []byte(mpesaCreds.InitiatorPassword)),
		"LEDGER_MPESA_CERT_FILE":               settingFile(t, "cert.pem", fake.Cert()), "LEDGER_MPESA_BASE_URL": fake.URL()}
}

// firstPrompt waits for the first STK prompt fake received.
func firstPrompt(t *testing.T, fake *mpesatest.Server) mpesatest.Prompt {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(fake.Prompts()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no prompt was sent")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fake.Prompts()[0]
}

// forwardedURL is a stand-in for ledgerd's public address, known before the
// process listens: it forwards to the server set later.
func forwardedURL(t *testing.T) (string, func(target string)) {
	t.Helper()
	var to atomic.Pointer[httputil.ReverseProxy]
	front := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := to.Load(); p != nil {
			p.ServeHTTP(w, r)
			return
		}
		http.Error(w, "not yet", http.StatusServiceUnavailable)
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = front.Serve(ln) }()
	t.Cleanup(func() { _ = front.Close() })
	return "http://" + ln.Addr().String(), func(target string) {
		u, err := url.Parse(target)
		if err != nil {
			t.Fatal(err)
		}
		to.Store(httputil.NewSingleHostReverseProxy(u))
	}
}

// productionMPesa starts production ledgerd with the M-Pesa rail on fake
// (Lightning on a fake node) and extra settings, its tenants and merchants
// made. Its public URL, which the callback URLs it gives M-Pesa name, is
// known before it listens; forward points it at another process. env is
// ledgerd's settings on p.s's books: a process started with it shares them.
func productionMPesa(t *testing.T, fake *mpesatest.Server, extra map[string]string) (p paymentSetup, env map[string]string, forward func(string)) {
	t.Helper()
	env = productionLightning(t, lndtest.NewNode(t))
	maps.Copy(env, mpesaEnv(t, fake))
	env["LEDGER_PUBLIC_URL"], forward = forwardedURL(t)
	maps.Copy(env, extra)
	p = newPaymentSetup(t, env)
	forward(p.s.URL)
	return p, onStore(p.s, env), forward
}

// TestProductionMPesaPushToB2C: production ledgerd takes a Kenyan momo
// payment by an STK prompt to the payer's default momo number, sent once
// by the workers after payment.created committed; the payer's approval
// (its callback) moves it to deposited, and the payout to a momo merchant
// goes by B2C, whose result moves it to success. A callback with a forged
// token is refused and logged.
func TestProductionMPesaPushToB2C(t *testing.T) {
	t.Parallel()
	fake := mpesatest.NewServer(t, mpesaCreds)
	p, env, _ := productionMPesa(t, fake, nil)
	public := env["LEDGER_PUBLIC_URL"]

	checkRailReady(t, p.s, "mpesa")
	got := p.pay(t, p.utok, fmt.Sprintf(`{"merchantId":%q,"amount":1000,"reference":"r","fromCountry":"Kenya"}`, p.keMomo))
	id := got["id"].(string)
	var due struct{ Amount int64 }
	jsonMember(t, got, "depositBankDetails", &due)
	prompt := firstPrompt(t, fake)
	if prompt.Amount != due.Amount || prompt.Phone != "254712345678" || !strings.HasPrefix(prompt.CallbackURL, public+mpesa.CallbackPrefix+"stk/") {
		t.Fatalf("got prompt %+v, want KES %d to the payer's default number at our callback URL", prompt, due.Amount)
	}

	forged := prompt
	forged.State, forged.Receipt = "paid", "SKLFORGED"
	r, err := http.Post(public+mpesa.CallbackPrefix+"stk/"+strings.Repeat("f", 32), "application/json",
		strings.NewReader(string(mpesatest.STKCallback(forged, time.Now()))))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, r.Body)
	r.Body.Close()
	if r.StatusCode != http.StatusNotFound || !strings.Contains(p.s.logs.String(), "mpesa callback: unknown token") {
		t.Errorf("forged callback: got %d, want 404 and a log line", r.StatusCode)
	}

	fake.CallbacksTwice(true)
	fake.Approve(prompt.CheckoutID)
	got = p.waitFor(t, id, 20*time.Second, statusIs("success"))
	if s := statuses(got); !slices.Equal(s, []string{"created", "deposited", "transferring", "success"}) {
		t.Errorf("statusLogs: got %v", s)
	}
	if got["amountDeposited"] != float64(due.Amount) {
		t.Errorf("amountDeposited: got %v, want %d", got["amountDeposited"], due.Amount)
	}
	payments := fake.Payments()
	pay, ok := payments[id]
	if !ok || len(payments) != 1 || pay.Requests != 1 || pay.Phone != "254722000111" || len(fake.Prompts()) != 1 {
		t.Fatalf("got B2C payments %+v and %d prompts, want one of each, the payout under the payment id", payments, len(fake.Prompts()))
	}
	// From the table: the API lists only events the sequencer has numbered,
	// which may lag the status just read.
	if types := p.s.eventTypes(t, id); len(types) != 4 {
		t.Errorf("events: got %v, want the deposit and the payout once", types)
	}
}

// TestProductionMomoWithoutMPesa: in production with no M-Pesa settings
// (and Paystack for bank payouts), a payout to a momo merchant and a
// Kenyan momo prompt to pay a bank merchant are refused before anything
// is created.
func TestProductionMomoWithoutMPesa(t *testing.T) {
	t.Parallel()
	p := newPaymentSetup(t, map[string]string{"LEDGER_MODE": "production", "LEDGER_PAYSTACK_SECRET_KEY": paystackTestKey,
		"LEDGER_PAYSTACK_BASE_URL": paystacktest.NewServer(t, paystackTestKey).URL()})
	before := p.s.countEvents(t)
	for _, body := range []string{fmt.Sprintf(`{"merchantId":%q,"amount":5000,"reference":"r"}`, p.keMomo),
		fmt.Sprintf(`{"merchantId":%q,"amount":5000,"reference":"r","fromCountry":"Kenya"}`, p.keBank)} {
		r := p.s.call(t, http.MethodPost, "/payments", p.utok, body)
		if pr := mustProblem(t, r, http.StatusServiceUnavailable, "rail_unavailable"); !strings.Contains(pr.Detail, "momo") {
			t.Errorf("detail: got %q", pr.Detail)
		}
	}
	if after := p.s.countEvents(t); after != before {
		t.Errorf("events: got %d more, want none", after-before)
	}
}

// TestMPesaConfiguration: ledgerd refuses to start with the M-Pesa rail
// half configured.
func TestMPesaConfiguration(t *testing.T) {
	t.Parallel()
	fake := mpesatest.NewServer(t, mpesaCreds)
	full := mpesaEnv(t, fake)
	full["LEDGER_MODE"] = "production"
	load := func(env map[string]string) (config, error) {
		env["LEDGER_MASTER_KEY_FILE"] = masterKey
		return loadEnv(env)
	}
	with := func(changes map[string]string) map[string]string { return changed(full, changes) }
	for name, env := range map[string]map[string]string{
		"no passkey":                 with(map[string]string{"LEDGER_MPESA_PASSKEY_FILE": ""}),
		"no certificate":             with(map[string]string{"LEDGER_MPESA_CERT_FILE": ""}),
		"secret twice":               with(map[string]string{"LEDGER_MPESA_CONSUMER_SECRET": "cs"}),
		"base URL alone":             {"LEDGER_MODE": "production", "LEDGER_MPESA_BASE_URL": "https://api.safaricom.co.ke"},
		"in sandbox":                 with(map[string]string{"LEDGER_MODE": "sandbox"}),
		"bad URL":                    with(map[string]string{"LEDGER_MPESA_BASE_URL": "api.safaricom.co.ke"}),
		"statements alone":           {"LEDGER_MODE": "production", "LEDGER_MPESA_STATEMENTS_DIR": t.TempDir()},
		"statements not a directory": with(map[string]string{"LEDGER_MPESA_STATEMENTS_DIR": filepath.Join(t.TempDir(), "missing")}),
	} {
		if _, err := load(env); err == nil || !strings.Contains(err.Error(), "MPESA") && !strings.Contains(err.Error(), "M-Pesa") {
			t.Errorf("%s: got %v, want an M-Pesa setting error", name, err)
		}
	}
	statements := t.TempDir()
	cfg, err := load(with(map[string]string{"LEDGER_MPESA_STATEMENTS_DIR": statements}))
	if err != nil || cfg.MPesa.StatementsDir != statements {
		t.Fatalf("got %q, %v; want the statements directory", cfg.MPesa.StatementsDir, err)
	}
	client, rail, err := newMPesa(cfg)
	if err != nil || client == nil || rail.PassKey != mpesaCreds.PassKey || rail.SecurityCredential == "" {
		t.Fatalf("got %v, %+v, %v; want the rail built from the files", client, rail, err)
	}
}

// TestProductionMPesaQueryAtExpiry: two ledgerd processes poll the open
// momo payments, and each payment is prompted once. A prompt paid whose
// callback never comes is found by STK Push Query when the payment's
// validity ends, and the payment is deposited rather than expired; a
// prompt the payer cancelled lets its payment expire.
func TestProductionMPesaQueryAtExpiry(t *testing.T) {
	t.Parallel()
	fake := mpesatest.NewServer(t, mpesaCreds)
	p, env, _ := productionMPesa(t, fake, map[string]string{"LEDGER_VALIDITY": "momo=3s"})
	startServer(t, env)

	body := fmt.Sprintf(`{"merchantId":%q,"amount":1000,"reference":"r","fromCountry":"Kenya"}`, p.keMomo)
	paid, cancelled := p.pay(t, p.utok, body)["id"].(string), p.pay(t, p.utok, body)["id"].(string)
	deadline := time.Now().Add(10 * time.Second)
	for len(fake.Prompts()) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("got %d prompts, want 2", len(fake.Prompts()))
		}
		time.Sleep(20 * time.Millisecond)
	}
	prompts := fake.Prompts()
	fake.ApproveWithoutCallback(prompts[0].CheckoutID)
	fake.Cancel(prompts[1].CheckoutID)
	got := p.waitFor(t, paid, 20*time.Second, statusIs("success"))
	if s := statuses(got); !slices.Equal(s, []string{"created", "deposited", "transferring", "success"}) {
		t.Errorf("statusLogs: got %v", s)
	}
	p.waitFor(t, cancelled, 10*time.Second, statusIs("expired"))
	if n := len(fake.Prompts()); n != 2 {
		t.Errorf("got %d prompts from two processes, want one per payment", n)
	}
}

// TestProductionMPesaRecoveryAfterRestart: ledgerd asks M-Pesa for a B2C
// payout, which M-Pesa makes, and stops before its result comes (the
// result is lost). The next process's stalled-payment sweep asks for the
// payout's Transaction Status instead of paying again, and its result
// records the success: one B2C request, one payment.
func TestProductionMPesaRecoveryAfterRestart(t *testing.T) {
	t.Parallel()
	fake := mpesatest.NewServer(t, mpesaCreds)
	fake.DropCallbacks(true)
	p, env, forward := productionMPesa(t, fake, map[string]string{"LEDGER_VALIDITY": "momo=2s"})

	id := p.pay(t, p.utok, fmt.Sprintf(`{"merchantId":%q,"amount":1000,"reference":"r","fromCountry":"Kenya"}`, p.keMomo))["id"].(string)
	fake.ApproveWithoutCallback(firstPrompt(t, fake).CheckoutID)
	deadline := time.Now().Add(10 * time.Second)
	moved, err := time.Parse(time.RFC3339Nano, p.waitFor(t, id, 20*time.Second, statusIs("transferring"))["updatedAt"].(string))
	if err != nil {
		t.Fatal(err)
	}
	for len(fake.Payments()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no B2C payment was asked for")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := p.s.stop(); err != nil {
		t.Fatal(err)
	}
	fake.DropCallbacks(false)

	env["LEDGER_STALLED_AFTER"] = "1s"
	time.Sleep(time.Until(moved.Add(1100 * time.Millisecond))) // stalled by then: the new process's first sweep takes it
	p.s = startServer(t, env)
	forward(p.s.URL)
	got := p.waitFor(t, id, 60*time.Second, statusIs("success"))
	pay := fake.Payments()[id]
	if len(fake.Payments()) != 1 || pay.Requests != 1 || fake.StatusQueries() == 0 || got["amountSettled"] != float64(pay.Amount) {
		t.Fatalf("got payments %+v, %d status queries, %v settled; want one B2C request recovered by Transaction Status",
			fake.Payments(), fake.StatusQueries(), got["amountSettled"])
	}
}
