package main

import (
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ledger/ledger/workers/webhooks"
)

// receiver is a webhook endpoint that records what it was sent and
// answers by a script: the status codes of the first calls, then 200.
type receiver struct {
	*httptest.Server
	secret string
	mu     sync.Mutex
	got    []delivered
	script []int
}

type delivered struct {
	ID, Type, Status string
	Verified         bool
	At               time.Time
}

func newReceiver(t *testing.T, secret string, script ...int) *receiver {
	t.Helper()
	rc := &receiver{secret: secret, script: script}
	rc.Server = httptest.NewServer(rc)
	t.Cleanup(rc.Close)
	return rc
}

// newTLSReceiver is a receiver over https, as production's webhooks must
// be, and the file of its certificate (PEM), which a ledgerd process
// trusts given it as SSL_CERT_FILE.
func newTLSReceiver(t *testing.T, secret string) (*receiver, string) {
	t.Helper()
	rc := &receiver{secret: secret}
	rc.Server = httptest.NewTLSServer(rc)
	t.Cleanup(rc.Close)
	return rc, settingFile(t, "receiver.pem", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: rc.Certificate().Raw}))
}

// ServeHTTP records a delivery and answers the next status of the script.
func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var msg struct {
		ID   string `json:"id"`
		Type string `json:"type"`
		Data struct {
			Status string `json:"status"`
		} `json:"data"`
	}
	json.Unmarshal(body, &msg)
	err := webhooks.Verify(rc.secret, r.Header, body, time.Minute, time.Now())
	rc.mu.Lock()
	rc.got = append(rc.got, delivered{ID: r.Header.Get("webhook-id"), Type: msg.Type, Status: msg.Data.Status,
		Verified: err == nil && msg.ID == r.Header.Get("webhook-id"), At: time.Now()})
	code := http.StatusOK
	if len(rc.script) > 0 {
		code, rc.script = rc.script[0], rc.script[1:]
	}
	rc.mu.Unlock()
	w.WriteHeader(code)
}

func (rc *receiver) deliveries() []delivered {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.got)
}

// waitFor polls the payment until cond holds or d passes.
func (p paymentSetup) waitFor(t *testing.T, id string, d time.Duration, cond func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		got := mustStatus(t, p.s.call(t, http.MethodGet, "/payments/"+id+"?includeStatusLog=true", p.tok, ""), http.StatusOK)
		if cond(got) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("payment %s: condition not met after %v; last %v (%v)", id, d, got["status"], got["statusLog"])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitWebhooksDone waits until the payment has no webhook delivery left
// to send: each is deleted from the work list when a 2xx answered it, so
// from then on the receiver's deliveries are final, without waiting for
// nothing to happen.
func (p paymentSetup) waitWebhooksDone(t *testing.T, id string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var pending int
		p.s.queryRow(t, `SELECT count(*) FROM webhook_deliveries WHERE payment_id = $1 AND status = 'pending'`, []any{id}, &pending)
		if pending == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("payment %s: %d webhooks still pending after 20s", id, pending)
		}
	}
}

func statusIs(s string) func(map[string]any) bool {
	return func(p map[string]any) bool { return p["status"] == s }
}

func statuses(p map[string]any) []string {
	var out []string
	for _, l := range p["statusLogs"].([]any) {
		out = append(out, l.(map[string]any)["status"].(string))
	}
	return out
}

// TestPaymentLifecycleToSuccess: a deposit moves a Lightning payment
// through deposited and transferring to success; each status is a signed
// webhook, in order, each once; the sandbox rail executed one payout; the
// process that took the deposit offered the payout and the webhooks to its
// fast path.
func TestPaymentLifecycleToSuccess(t *testing.T) {
	t.Parallel()
	p := newPaymentSetup(t, nil)
	rc := newReceiver(t, "whsec_c2VjcmV0LWtleS1mb3ItdGVzdHM=")
	created := p.pay(t, p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":1500,"reference":"r","bufferRate":0.05,
		"webhookUrl":%q,"webhookSecret":%q}`, p.za, rc.URL+"/hook", rc.secret))
	id := created["id"].(string)
	dep := mustStatus(t, p.s.call(t, http.MethodPost, "/sandbox/payments/"+id+"/deposit", p.tok, ""), http.StatusAccepted)
	if dep["status"] != "deposited" || dep["amountDeposited"] == 0.0 {
		t.Fatalf("deposit: got %v with %v deposited", dep["status"], dep["amountDeposited"])
	}
	done := p.waitFor(t, id, 20*time.Second, statusIs("success"))
	if got := statuses(done); !slices.Equal(got, []string{"created", "deposited", "transferring", "success"}) {
		t.Errorf("statusLogs: got %v", got)
	}
	if done["amountSettled"] != 1500.0 || done["changeRefundStatus"] == nil {
		t.Errorf("settled: got amountSettled %v, change %v %v", done["amountSettled"], done["changeRefundAmount"], done["changeRefundStatus"])
	}
	p.waitWebhooksDone(t, id)
	var types []string
	for _, d := range rc.deliveries() {
		types = append(types, d.Type)
		if !d.Verified {
			t.Errorf("delivery %s: signature or id does not verify", d.Type)
		}
	}
	if !slices.Equal(types, []string{"payment.created", "payment.deposited", "payment.transferring", "payment.success"}) {
		t.Errorf("webhooks: got %v, want each status once, in order", types)
	}
	books := mustStatus(t, p.s.call(t, http.MethodGet, "/sandbox/payouts?paymentId="+id, p.tok, ""), http.StatusOK)
	if items := books["items"].([]any); len(items) != 1 {
		t.Errorf("sandbox payouts: got %v, want exactly one", books)
	}
	attempts := mustStatus(t, p.s.call(t, http.MethodGet, "/payments/"+id+"/webhooks", p.tok, ""), http.StatusOK)["items"].([]any)
	if len(attempts) != 4 {
		t.Errorf("webhook attempts: got %v", attempts)
	}
	metrics := string(p.s.get(t, "/metrics").Body)
	for _, want := range []string{`ledger_worker_fast_path_total{outcome="queued",step="payout"} 1`,
		`ledger_worker_fast_path_total{outcome="queued",step="webhook"} 4`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics: no %s", want)
		}
	}
}

// TestPaymentFailedPartialAndHeld covers the other paths: a payout the
// rail rejects (the documented failing account number), a partial deposit
// that keeps the payment waiting, and a South African payment above ZAR
// 50,000 held in deposited until a document is attached.
func TestPaymentFailedPartialAndHeld(t *testing.T) {
	t.Parallel()
	p := newPaymentSetup(t, nil)
	failing := mustStatus(t, p.s.call(t, http.MethodPost, "/merchants", p.tok,
		`{"name":"Bounce","country":"SouthAfrica","bankName":"Nedbank","accountNumber":"4000000000"}`), http.StatusCreated)["id"].(string)
	rc := newReceiver(t, "plain secret")

	t.Run("rejected payout", func(t *testing.T) {
		id := p.pay(t, p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":500,"reference":"r","webhookUrl":%q,"webhookSecret":%q}`,
			failing, rc.URL, rc.secret))["id"].(string)
		mustStatus(t, p.s.call(t, http.MethodPost, "/sandbox/payments/"+id+"/deposit", p.tok, `{}`), http.StatusAccepted)
		got := p.waitFor(t, id, 20*time.Second, statusIs("failed"))
		if got["amountSettled"] != nil || got["statusLog"] != "Payout rejected: the recipient bank rejected the account number" {
			t.Errorf("failed: got amountSettled %v, statusLog %q", got["amountSettled"], got["statusLog"])
		}
		if s := statuses(got); !slices.Equal(s, []string{"created", "deposited", "transferring", "failed"}) {
			t.Errorf("statusLogs: got %v", s)
		}
	})
	t.Run("partial deposits", func(t *testing.T) {
		created := p.pay(t, p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":800,"reference":"r"}`, p.za))
		id := created["id"].(string)
		sats, _ := strconv.ParseInt(created["amountBtc"].(string), 10, 64)
		first := mustStatus(t, p.s.call(t, http.MethodPost, "/sandbox/payments/"+id+"/deposit", p.tok,
			fmt.Sprintf(`{"amount":%d}`, sats/2)), http.StatusAccepted)
		if first["status"] != "created" || first["amountDeposited"] != float64(sats/2) {
			t.Fatalf("half: got %v with %v deposited", first["status"], first["amountDeposited"])
		}
		mustProblem(t, p.s.call(t, http.MethodPost, "/sandbox/payments/"+id+"/deposit", p.tok, `{"amount":0}`),
			http.StatusBadRequest, "validation_failed")
		rest := mustStatus(t, p.s.call(t, http.MethodPost, "/sandbox/payments/"+id+"/deposit", p.tok,
			fmt.Sprintf(`{"amount":%d}`, sats-sats/2)), http.StatusAccepted)
		if rest["status"] != "deposited" || rest["amountDeposited"] != float64(sats) {
			t.Fatalf("rest: got %v with %v deposited", rest["status"], rest["amountDeposited"])
		}
		p.waitFor(t, id, 20*time.Second, statusIs("success"))
		mustProblem(t, p.s.call(t, http.MethodPost, "/sandbox/payments/"+id+"/deposit", p.tok, ""),
			http.StatusConflict, "payment_not_awaiting_funds")
	})
	t.Run("document hold", func(t *testing.T) {
		id := p.pay(t, p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":60000,"reference":"big"}`, p.za))["id"].(string)
		mustStatus(t, p.s.call(t, http.MethodPost, "/sandbox/payments/"+id+"/deposit", p.tok, ""), http.StatusAccepted)
		time.Sleep(500 * time.Millisecond)
		held := p.waitFor(t, id, time.Second, statusIs("deposited"))
		if !strings.Contains(held["statusLog"].(string), "awaiting supporting documents") {
			t.Fatalf("held: got statusLog %q", held["statusLog"])
		}
		mustStatus(t, p.attach(t, id, p.tok, filePart("invoice.pdf", pdfBytes)), http.StatusCreated)
		p.waitFor(t, id, 20*time.Second, statusIs("success"))
	})
}

// TestWebhookRetriesThenStops: a receiver that answers 500 twice gets the
// created webhook three times (attempts 1-3 listed), then never again; the
// later statuses wait for it and arrive in order. Delivered, they leave the
// work list.
func TestWebhookRetriesThenStops(t *testing.T) {
	t.Parallel()
	p := newPaymentSetup(t, map[string]string{"LEDGER_WEBHOOK_RETRY": "100ms,100ms,100ms"})
	rc := newReceiver(t, "whsec_c2VjcmV0", http.StatusInternalServerError, http.StatusInternalServerError)
	id := p.pay(t, p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":500,"reference":"r","webhookUrl":%q,"webhookSecret":%q}`,
		p.za, rc.URL, rc.secret))["id"].(string)
	mustStatus(t, p.s.call(t, http.MethodPost, "/sandbox/payments/"+id+"/deposit", p.tok, ""), http.StatusAccepted)
	p.waitFor(t, id, 20*time.Second, statusIs("success"))
	p.waitWebhooksDone(t, id)
	var types []string
	for _, d := range rc.deliveries() {
		types = append(types, d.Type)
	}
	want := []string{"payment.created", "payment.created", "payment.created", "payment.deposited", "payment.transferring", "payment.success"}
	if !slices.Equal(types, want) {
		t.Fatalf("deliveries: got %v, want %v", types, want)
	}
	attempts := mustStatus(t, p.s.call(t, http.MethodGet, "/payments/"+id+"/webhooks", p.tok, ""), http.StatusOK)["items"].([]any)
	if len(attempts) != 6 {
		t.Fatalf("attempts: got %d %v", len(attempts), attempts)
	}
	for i, want := range []struct {
		attempt float64
		code    float64
		failed  bool
	}{{1, 500, true}, {2, 500, true}, {3, 200, false}} {
		a := attempts[i].(map[string]any)
		if a["attempt"] != want.attempt || a["statusCode"] != want.code || (a["error"] != nil) != want.failed ||
			a["type"] != "payment.created" || a["eventId"] != rc.deliveries()[0].ID {
			t.Errorf("attempt %d: got %v", i+1, a)
		}
	}
	// Delivered, the deliveries leave the work list (their attempts are the history).
	var left int
	p.s.queryRow(t, `SELECT count(*) FROM webhook_deliveries WHERE payment_id = $1`, []any{id}, &left)
	if left != 0 {
		t.Errorf("webhook_deliveries: %d rows left for a payment whose webhooks were all delivered", left)
	}
}

// TestUnreadableWebhookSecret: a delivery whose webhookSecret can never be
// opened (sealed with a key this database does not have) is sent to no one
// and recorded as a failed attempt each time it falls due, so it runs out
// of retries on its schedule and the partner sees why; before, it was
// tried again every lease, for ever, with no attempt recorded.
func TestUnreadableWebhookSecret(t *testing.T) {
	t.Parallel()
	p := newPaymentSetup(t, map[string]string{"LEDGER_WEBHOOK_RETRY": "2s,100ms,100ms"})
	rc := newReceiver(t, "whsec_c2VjcmV0", http.StatusInternalServerError)
	id := p.pay(t, p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":500,"reference":"r","webhookUrl":%q,"webhookSecret":%q}`,
		p.za, rc.URL, rc.secret))["id"].(string)
	attempts := func() []any {
		return mustStatus(t, p.s.call(t, http.MethodGet, "/payments/"+id+"/webhooks", p.tok, ""), http.StatusOK)["items"].([]any)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(attempts()) < 1 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	// The first attempt got a 500; its retry is due in 2 s. Its secret now
	// names a sealing key that does not exist.
	var updated int
	p.s.queryRow(t, `WITH u AS (UPDATE webhook_deliveries
		SET payment = jsonb_set(payment::jsonb, '{webhookSecret}', '"sealed:v1:gone:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"')
		WHERE payment_id = $1 RETURNING 1) SELECT count(*) FROM u`, []any{id}, &updated)
	if updated != 1 {
		t.Fatalf("updated %d deliveries, want the payment's one", updated)
	}
	var status string
	for deadline = time.Now().Add(15 * time.Second); status != "exhausted" && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		p.s.queryRow(t, `SELECT coalesce((SELECT status FROM webhook_deliveries WHERE payment_id = $1), 'gone')`, []any{id}, &status)
	}
	if status != "exhausted" {
		t.Fatalf("the delivery is %s, want exhausted after its retries", status)
	}
	got := attempts()
	if len(got) != 4 || len(rc.deliveries()) != 1 {
		t.Fatalf("got %d attempts and %d deliveries, want 4 and 1: %v", len(got), len(rc.deliveries()), got)
	}
	for i, x := range got[1:] {
		a := x.(map[string]any)
		if a["error"] != webhooks.FailureSecretUnusable || a["statusCode"] != nil {
			t.Errorf("attempt %d: got %v, want it failed unsent for its secret", i+2, a)
		}
	}
}

// TestExpiryAfterRestart: a payment whose validity ends while no ledgerd
// runs expires promptly once one starts, with its webhook.
func TestExpiryAfterRestart(t *testing.T) {
	t.Parallel()
	p := newPaymentSetup(t, map[string]string{"LEDGER_VALIDITY": "lightning=1s", "LEDGER_EXPIRY_POLL": "1h"})
	rc := newReceiver(t, "s")
	id := p.pay(t, p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":500,"reference":"r","webhookUrl":%q}`, p.za, rc.URL))["id"].(string)
	if err := p.s.stop(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	p.s = startServer(t, onStore(p.s, map[string]string{"LEDGER_EXPIRY_POLL": "200ms"}))
	got := p.waitFor(t, id, 15*time.Second, statusIs("expired"))
	if s := statuses(got); !slices.Equal(s, []string{"created", "expired"}) {
		t.Errorf("statusLogs: got %v", s)
	}
	mustProblem(t, p.s.call(t, http.MethodPost, "/sandbox/payments/"+id+"/deposit", p.tok, ""), http.StatusConflict, "payment_not_awaiting_funds")
	deadline := time.Now().Add(20 * time.Second)
	for len(rc.deliveries()) < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if d := rc.deliveries(); len(d) != 2 || d[1].Type != "payment.expired" {
		t.Errorf("webhooks: got %v, want created then expired", d)
	}
}

// TestProductionModeRules: outside sandbox mode a webhookUrl must be https
// and public (checked before anything is created), and the sandbox
// helpers do not exist.
func TestProductionModeRules(t *testing.T) {
	t.Parallel()
	p := newPaymentSetup(t, map[string]string{"LEDGER_MODE": "production"})
	for _, hook := range []string{"http://example.com/h", "https://127.0.0.1/h", "https://[::1]/h", "https://10.1.2.3/h"} {
		r := p.s.call(t, http.MethodPost, "/payments", p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":500,"reference":"r","webhookUrl":%q}`, p.za, hook))
		mustFieldError(t, mustProblem(t, r, http.StatusBadRequest, "validation_failed"), "webhookUrl")
	}
	// No bank payout rail is configured (nor a Lightning node, and the
	// price feed is out of reach here): 503, nothing created.
	r := p.s.call(t, http.MethodPost, "/payments", p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":500,"reference":"r"}`, p.za))
	mustProblem(t, r, http.StatusServiceUnavailable, "rail_unavailable")
	id := "01936f41-2b3c-7d4e-8f5a-6b7c8d9e0f1a"
	mustProblem(t, p.s.call(t, http.MethodPost, "/sandbox/payments/"+id+"/deposit", p.tok, ""), http.StatusNotFound, "not_found")
	mustProblem(t, p.s.call(t, http.MethodGet, "/sandbox/payouts?paymentId="+id, p.tok, ""), http.StatusNotFound, "not_found")
}

// TestSlowReceiverDelaysNoOneElse: while one partner's receiver holds its
// deliveries without answering, another's webhooks arrive.
func TestSlowReceiverDelaysNoOneElse(t *testing.T) {
	t.Parallel()
	p := newPaymentSetup(t, nil)
	release := make(chan struct{})
	var held atomic.Int32
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		held.Add(1)
		select {
		case <-release:
		case <-time.After(9 * time.Second): // inside the 10 s attempt timeout
		}
	}))
	defer slow.Close()
	defer close(release)
	fast := newReceiver(t, "s")
	for range 5 {
		p.pay(t, p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":500,"reference":"r","webhookUrl":%q}`, p.za, slow.URL))
	}
	for held.Load() < 5 {
		time.Sleep(10 * time.Millisecond)
	}
	p.pay(t, p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":500,"reference":"r","webhookUrl":%q}`, p.za, fast.URL))
	deadline := time.Now().Add(8 * time.Second)
	for len(fast.deliveries()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the fast receiver got nothing while the slow one held its deliveries")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestChangeRefundWithDriftingPrice: with the sandbox price drifting, the
// conversion happens at the price of that moment, and the sats received
// beyond what the payout cost then are the change (contract §7). Once the
// payout succeeds, a momo payer's change is paid back to the phone the
// push prompted, once, through the sandbox rail; a Lightning payer is
// anonymous, and their change waits for an operator.
func TestChangeRefundWithDriftingPrice(t *testing.T) {
	t.Parallel()
	p := newPaymentSetup(t, map[string]string{"LEDGER_SANDBOX_PRICE_DRIFT": "0.04/4s"})
	from := time.Now().UTC().Truncate(time.Second)
	momoFail := mustStatus(t, p.s.call(t, http.MethodPost, "/merchants", p.tok,
		`{"name":"Unregistered","country":"Kenya","phoneNumber":"+254700000002"}`), http.StatusCreated)["id"].(string)
	var ids []string
	for i := range 4 {
		ids = append(ids, p.pay(t, p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":1500,"reference":"r","bufferRate":0.1}`, p.za))["id"].(string))
		time.Sleep(time.Duration(i) * 300 * time.Millisecond) // deposits at other points of the price wave
	}
	momo := p.pay(t, p.utok, fmt.Sprintf(`{"merchantId":%q,"amount":1500,"reference":"r","fromCountry":"Kenya","bufferRate":0.1}`, p.za))["id"].(string)
	for _, id := range append(ids, momo) {
		mustStatus(t, p.s.call(t, http.MethodPost, "/sandbox/payments/"+id+"/deposit", p.tok, ""), http.StatusAccepted)
	}
	prices := map[any]bool{}
	for _, id := range ids {
		got := p.waitFor(t, id, 20*time.Second, func(p map[string]any) bool { return p["changeRefundStatus"] == "queued" })
		prices[got["btcPrice"]] = true
		deposited := int64(got["amountDeposited"].(float64))
		converted, _ := strconv.ParseInt(got["amountBtc"].(string), 10, 64)
		change := int64(got["changeRefundAmount"].(float64))
		if change <= 0 || got["status"] != "success" || deposited-converted != change {
			t.Errorf("payment %s (%v): deposited %d, converted %d sats, change %d; want the 10%% buffer's rest as change, queued",
				id, got["status"], deposited, converted, change)
		}
	}
	if len(prices) < 2 {
		t.Errorf("conversion prices: got %v, want the drift to move them", prices)
	}
	got := p.waitFor(t, momo, 20*time.Second, func(p map[string]any) bool { return p["changeRefundStatus"] == "refunded" })
	if got["status"] != "success" || got["changeRefundAmount"].(float64) <= 0 {
		t.Errorf("momo payment: got %v with change %v, want success with change", got["status"], got["changeRefundAmount"])
	}
	var refunds int
	var key, rail, currency, phone, amount string
	p.s.queryRow(t, `SELECT count(*) OVER (), idempotency_key, rail, currency, destination, amount::text FROM sandbox_payouts
		WHERE payment_id = $1 AND refund`, []any{momo}, &refunds, &key, &rail, &currency, &phone, &amount)
	if refunds != 1 || key != "change-"+momo || rail != "MOMO" || currency != "KES" || phone != "+254712345678" || amount == "0" {
		t.Errorf("sandbox refunds: got %d, %s %s %s to %s keyed %s; want one MOMO KES refund to the prompted phone keyed change-<id>",
			refunds, rail, amount, currency, phone, key)
	}
	payouts := mustStatus(t, p.s.call(t, http.MethodGet, "/sandbox/payouts?paymentId="+momo, p.tok, ""), http.StatusOK)
	if items := payouts["items"].([]any); len(items) != 1 || payouts["calls"] != 1.0 {
		t.Errorf("sandbox payouts: got %v, want the payout alone, called once", payouts)
	}
	// Reconciled, the rail's books hold the momo deposit and the change
	// refund; the ledger holds both under the same references.
	if rep := p.s.reconcile(t, "MOMO", from, time.Now().UTC().Add(time.Minute)); rep.Matched != 2 || len(rep.Breaks) != 0 {
		t.Errorf("reconciled MOMO: got %d matched, breaks %v; want the deposit and the refund, no break", rep.Matched, rep.found())
	}
	// The documented failing momo number: the payout is rejected.
	id := p.pay(t, p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":1000}`, momoFail))["id"].(string)
	mustStatus(t, p.s.call(t, http.MethodPost, "/sandbox/payments/"+id+"/deposit", p.tok, ""), http.StatusAccepted)
	got = p.waitFor(t, id, 20*time.Second, statusIs("failed"))
	if got["statusLog"] != "Payout rejected: the number is not registered for mobile money" {
		t.Errorf("momo failure: got %q", got["statusLog"])
	}
}
