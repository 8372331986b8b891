package paystack

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/eventstore"
	"github.com/ledger/ledger/eventstore/testenv"
	"github.com/ledger/ledger/workers/rails/payout"
	"github.com/ledger/ledger/workers/rails/paystack/paystacktest"
)

const testSecret = "sk_test_ledger"

// env is the rail on a database of its own against the fake, its webhook
// route served where the fake sends webhooks.
type env struct {
	pool     *pgxpool.Pool
	fake     *paystacktest.Server
	rail     *Rail
	outcomes *recorded
	hook     *httptest.Server
}

// recorded is Outcomes as the workers would be: a settled payout is
// called again, and the answer kept.
type recorded struct {
	mu        sync.Mutex
	rail      func() *Rail
	settled   map[uuid.UUID][]payout.Outcome
	reversals map[uuid.UUID]int
	requests  map[uuid.UUID]payout.Request
}

func (r *recorded) PayoutSettled(ctx context.Context, _, paymentID uuid.UUID) error {
	r.mu.Lock()
	req := r.requests[paymentID]
	r.mu.Unlock()
	out, err := r.rail().Payout(ctx, req)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.settled[paymentID] = append(r.settled[paymentID], out)
	return nil
}

func (r *recorded) PayoutReversed(_ context.Context, _, paymentID uuid.UUID, _, _, _ string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reversals[paymentID]++
	return nil
}

func (r *recorded) outcomes(id uuid.UUID) []payout.Outcome {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]payout.Outcome(nil), r.settled[id]...)
}

func (r *recorded) reversed(id uuid.UUID) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reversals[id]
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, testenv.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := eventstore.Migrate(ctx, pool, eventstore.MigrationSet{Component: "paystack-payouts", FS: Migrations}); err != nil {
		t.Fatal(err)
	}
	e := &env{pool: pool, fake: paystacktest.NewServer(t, testSecret)}
	e.outcomes = &recorded{rail: func() *Rail { return e.rail }, settled: map[uuid.UUID][]payout.Outcome{},
		reversals: map[uuid.UUID]int{}, requests: map[uuid.UUID]payout.Request{}}
	e.rail = e.newRail(5 * time.Second)
	e.hook = httptest.NewServer(e.rail)
	t.Cleanup(e.hook.Close)
	e.fake.SetWebhookURL(e.hook.URL + WebhookPath)
	return e
}

// newRail is another process's rail: the same books and provider.
func (e *env) newRail(timeout time.Duration) *Rail {
	client := NewClient(e.fake.URL(), testSecret, &http.Client{Timeout: timeout})
	return NewRail(e.pool, client, NewBankList(client), e.outcomes, slog.New(slog.NewTextHandler(io.Discard, nil)), prometheus.NewRegistry())
}

func (e *env) request(currency, bank, account string) payout.Request {
	id := uuid.New()
	r := payout.Request{PaymentID: id, TenantID: uuid.New(), IdempotencyKey: id.String(), Rail: "BANK",
		Amount: decimal.RequireFromString("1500.25"), Currency: currency, BankName: bank, AccountNumber: account, Name: "Shoprite"}
	e.outcomes.mu.Lock()
	e.outcomes.requests[id] = r
	e.outcomes.mu.Unlock()
	return r
}

// counted is a counter's value.
func counted(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

func (e *env) za() payout.Request { return e.request("ZAR", "Capitec Bank", "1234567890") }

// mustPending calls the rail and wants the transfer queued, not ended.
func (e *env) mustPending(t *testing.T, rail *Rail, r payout.Request) {
	t.Helper()
	if out, err := rail.Payout(context.Background(), r); !errors.Is(err, errPending) {
		t.Fatalf("got %+v, %v; want the transfer pending", out, err)
	}
}

// settledAs waits for the webhook's outcome to reach Outcomes n times.
func (e *env) settledAs(t *testing.T, id uuid.UUID, n int) []payout.Outcome {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(e.outcomes.outcomes(id)) < n && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	got := e.outcomes.outcomes(id)
	if len(got) != n {
		t.Fatalf("got %d settlements %v, want %d", len(got), got, n)
	}
	return got
}

func TestPayoutZARThroughWebhook(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.za()
	e.mustPending(t, e.rail, r)
	tr, ok := e.fake.Transfer(r.IdempotencyKey)
	if !ok || tr.Amount != 150025 || tr.Currency != "ZAR" || tr.Status != "pending" {
		t.Fatalf("got transfer %+v, want 150025 ZAR cents pending under the payout's key", tr)
	}
	e.fake.Settle(r.IdempotencyKey, "success")
	got := e.settledAs(t, r.PaymentID, 1)
	if got[0].Rejected || got[0].PayoutID != tr.TransferCode {
		t.Fatalf("got %+v, want success with %s", got[0], tr.TransferCode)
	}
	// Calls after the outcome answer it without asking Paystack to pay.
	out, err := e.rail.Payout(context.Background(), r)
	if err != nil || out.PayoutID != tr.TransferCode || e.fake.Posts() != 1 || e.fake.Transfers() != 1 {
		t.Fatalf("got %+v, %v after %d posts and %d transfers, want the same answer from one of each", out, err, e.fake.Posts(), e.fake.Transfers())
	}
}

func TestPayoutCountries(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.fake.SettleWith("success")
	for _, r := range []payout.Request{e.request("NGN", "Zenith Bank", "0123456789"), e.request("KES", "Equity Bank Kenya", "0123456789012")} {
		e.mustPending(t, e.rail, r)
		if got := e.settledAs(t, r.PaymentID, 1); got[0].Rejected {
			t.Errorf("%s: got %+v, want success", r.Currency, got[0])
		}
	}
	// A second payout to an account reuses its recipient.
	first := e.za()
	e.mustPending(t, e.rail, first)
	second := e.za()
	e.mustPending(t, e.rail, second)
	a, _ := e.fake.Transfer(first.IdempotencyKey)
	b, _ := e.fake.Transfer(second.IdempotencyKey)
	var recipients int
	if err := e.pool.QueryRow(context.Background(), `SELECT count(*) FROM paystack_recipients`).Scan(&recipients); err != nil {
		t.Fatal(err)
	}
	if a.Recipient != b.Recipient || recipients != 3 {
		t.Errorf("got recipients %s and %s, %d cached; want one per account (3)", a.Recipient, b.Recipient, recipients)
	}
}

func TestPayoutRejections(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for name, r := range map[string]payout.Request{
		"unknown bank":    e.request("ZAR", "Bank of Nowhere", "1"),
		"not a bank rail": {PaymentID: uuid.New(), IdempotencyKey: "k", Rail: "MOMO", Amount: decimal.NewFromInt(5), Currency: "KES"},
		"sub-cent amount": {PaymentID: uuid.New(), IdempotencyKey: "k2", Rail: "BANK", Amount: decimal.RequireFromString("1.001"),
			Currency: "ZAR", BankName: "Capitec Bank", AccountNumber: "1"},
	} {
		out, err := e.rail.Payout(context.Background(), r)
		if err != nil || !out.Rejected || out.Reason == "" {
			t.Errorf("%s: got %+v, %v; want a rejection with its reason", name, out, err)
		}
	}
	if e.fake.Posts() != 0 {
		t.Errorf("got %d transfers asked for, want none", e.fake.Posts())
	}
}

func TestPayoutAfterProvider500(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.za()
	e.fake.FailNext("POST /transfer", 1)
	if _, err := e.rail.Payout(context.Background(), r); err == nil || errors.Is(err, errPending) {
		t.Fatalf("got %v, want the 500 as an error", err)
	}
	e.mustPending(t, e.rail, r)
	if e.fake.Transfers() != 1 {
		t.Fatalf("got %d transfers, want 1", e.fake.Transfers())
	}
	e.fake.Settle(r.IdempotencyKey, "failed")
	if got := e.settledAs(t, r.PaymentID, 1); !got[0].Rejected || !strings.Contains(got[0].Reason, "failed") {
		t.Fatalf("got %+v, want the failure", got[0])
	}
}

// TestPayoutAfterTimeout: Paystack queued the transfer but its answer never
// came; the retry verifies and finds it.
func TestPayoutAfterTimeout(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rail := e.newRail(300 * time.Millisecond)
	r := e.za()
	e.fake.HangNext("POST /transfer", 1)
	if _, err := rail.Payout(context.Background(), r); err == nil || errors.Is(err, errPending) {
		t.Fatalf("got %v, want the timeout as an error", err)
	}
	e.mustPending(t, rail, r)
	if e.fake.Posts() != 1 || e.fake.Transfers() != 1 {
		t.Fatalf("got %d posts and %d transfers, want the retry to verify instead of posting", e.fake.Posts(), e.fake.Transfers())
	}
}

// TestPayoutRecoveryAfterCrash: a process dies after its POST /transfer and
// before the payment's event, and no webhook comes; another process's call
// (the stalled sweep) learns the outcome by verification. One transfer.
func TestPayoutRecoveryAfterCrash(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.fake.SetDelivery(paystacktest.Never)
	e.fake.SettleWith("success")
	r := e.za()
	ctx, crash := context.WithCancel(context.Background())
	e.fake.HangNext("POST /transfer", 1)
	done := make(chan error, 1)
	go func() { _, err := e.newRail(5*time.Second).Payout(ctx, r); done <- err }()
	for e.fake.Transfers() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	crash()
	if err := <-done; err == nil {
		t.Fatal("the crashed call answered")
	}
	e.fake.Settle(r.IdempotencyKey, "success") // no webhook (Never)
	out, err := e.newRail(5*time.Second).Payout(context.Background(), r)
	tr, _ := e.fake.Transfer(r.IdempotencyKey)
	if err != nil || out.Rejected || out.PayoutID != tr.TransferCode || e.fake.Posts() != 1 || e.fake.Transfers() != 1 {
		t.Fatalf("got %+v, %v after %d posts, %d transfers; want success by verification, one of each", out, err, e.fake.Posts(), e.fake.Transfers())
	}
}

func TestWebhookTwiceAndLate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.fake.SetDelivery(paystacktest.Twice)
	r := e.za()
	e.mustPending(t, e.rail, r)
	e.fake.Settle(r.IdempotencyKey, "success")
	got := e.settledAs(t, r.PaymentID, 2)
	if got[0] != got[1] || got[0].Rejected {
		t.Fatalf("got %v, want the same success twice", got)
	}
	// Much later, the same webhook again: the same answer, nothing new.
	tr, _ := e.fake.Transfer(r.IdempotencyKey)
	if code := e.fake.Send("transfer.success", tr); code != http.StatusOK {
		t.Fatalf("late webhook: got %d, want 200", code)
	}
	if got := e.settledAs(t, r.PaymentID, 3); got[2] != got[0] || e.fake.Transfers() != 1 {
		t.Fatalf("late webhook: got %v and %d transfers", got, e.fake.Transfers())
	}
}

// TestWebhooksOutOfOrder: a transfer that succeeded and was then reversed,
// its webhooks arriving reversed first. The rail records what Paystack
// says now (reversed before we saw success: the payout failed, the money
// is back), and the stale success after it changes nothing.
func TestWebhooksOutOfOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.fake.SetDelivery(paystacktest.Never)
	r := e.za()
	e.mustPending(t, e.rail, r)
	e.fake.Settle(r.IdempotencyKey, "success")
	success, _ := e.fake.Transfer(r.IdempotencyKey)
	e.fake.Settle(r.IdempotencyKey, "reversed")
	reversed, _ := e.fake.Transfer(r.IdempotencyKey)
	for _, s := range []struct {
		event string
		tr    paystacktest.Transfer
	}{{"transfer.reversed", reversed}, {"transfer.success", success}} {
		if code := e.fake.Send(s.event, s.tr); code != http.StatusOK {
			t.Fatalf("%s: got %d", s.event, code)
		}
	}
	got := e.settledAs(t, r.PaymentID, 2)
	if !got[0].Rejected || got[1] != got[0] || e.outcomes.reversed(r.PaymentID) != 0 {
		t.Fatalf("got %v and %d reversals, want the failure twice and no reversal", got, e.outcomes.reversed(r.PaymentID))
	}
}

func TestWebhookBadSignature(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.fake.SetDelivery(paystacktest.Never)
	r := e.za()
	e.mustPending(t, e.rail, r)
	e.fake.Settle(r.IdempotencyKey, "success")
	tr, _ := e.fake.Transfer(r.IdempotencyKey)
	body := paystacktest.WebhookBody("transfer.success", tr)
	for name, sig := range map[string]string{"none": "", "not hex": "zz", "other key": paystacktest.Sign("sk_test_other", body),
		"truncated": paystacktest.Sign(testSecret, body)[:64]} {
		if code := e.fake.Post(body, sig); code != http.StatusUnauthorized {
			t.Errorf("%s: got %d, want 401", name, code)
		}
	}
	if got := counted(t, e.rail.metrics.webhooks.WithLabelValues("bad_signature")); got != 4 {
		t.Errorf("bad_signature count: got %v, want 4", got)
	}
	row, _, err := e.rail.load(context.Background(), r.IdempotencyKey)
	if err != nil || row.status != "pending" || len(e.outcomes.outcomes(r.PaymentID)) != 0 {
		t.Fatalf("got %s, %v, %v; want nothing changed", row.status, err, e.outcomes.outcomes(r.PaymentID))
	}
}

func TestReversalAfterSuccess(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.za()
	e.mustPending(t, e.rail, r)
	e.fake.Settle(r.IdempotencyKey, "success")
	e.settledAs(t, r.PaymentID, 1)
	e.fake.Settle(r.IdempotencyKey, "reversed")
	tr, _ := e.fake.Transfer(r.IdempotencyKey)
	e.fake.Send("transfer.reversed", tr) // delivered again
	if n := e.outcomes.reversed(r.PaymentID); n != 2 {
		t.Fatalf("got %d reversal reports, want one per webhook (2)", n)
	}
	if got := counted(t, e.rail.metrics.alerts.WithLabelValues("reversed")); got != 1 {
		t.Fatalf("reversal alerts: got %v, want 1", got)
	}
	// The payout was made: calls still answer its success; the reversal
	// is the payment's own event.
	if out, err := e.rail.Payout(context.Background(), r); err != nil || out.Rejected || out.PayoutID != tr.TransferCode {
		t.Fatalf("got %+v, %v", out, err)
	}
}

func TestWebhookNotOurs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	body := []byte(`{"event":"transfer.success","data":{"reference":"someone-else-0001"}}`)
	if code := e.fake.Post(body, paystacktest.Sign(testSecret, body)); code != http.StatusOK {
		t.Fatalf("got %d, want 200 (Paystack must not resend it)", code)
	}
	charge := []byte(`{"event":"charge.success","data":{"reference":"x"}}`)
	if code := e.fake.Post(charge, paystacktest.Sign(testSecret, charge)); code != http.StatusOK {
		t.Fatalf("charge: got %d, want 200", code)
	}
}

// TestWebhookWhileVerifyFails: a webhook whose verification Paystack
// answers 500 is answered 503, so Paystack sends it again; the repeat
// records the outcome.
func TestWebhookWhileVerifyFails(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.fake.SetDelivery(paystacktest.Never)
	r := e.za()
	e.mustPending(t, e.rail, r)
	e.fake.Settle(r.IdempotencyKey, "success")
	tr, _ := e.fake.Transfer(r.IdempotencyKey)
	e.fake.FailNext("GET /transfer/verify", 1)
	if code := e.fake.Send("transfer.success", tr); code != http.StatusServiceUnavailable {
		t.Fatalf("got %d, want 503 while Paystack cannot confirm", code)
	}
	if got := e.outcomes.outcomes(r.PaymentID); len(got) != 0 {
		t.Fatalf("got %v, want nothing recorded", got)
	}
	if code := e.fake.Send("transfer.success", tr); code != http.StatusOK {
		t.Fatalf("resend: got %d, want 200", code)
	}
	if got := e.settledAs(t, r.PaymentID, 1); got[0].PayoutID != tr.TransferCode {
		t.Fatalf("got %+v", got[0])
	}
}

// TestWebhookAtTwoProcesses: two processes receive the same webhooks at
// once; the outcome is recorded once and the reversal alerts once.
func TestWebhookAtTwoProcesses(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.fake.SetDelivery(paystacktest.Never)
	r := e.za()
	e.mustPending(t, e.rail, r)
	rails := []*Rail{e.rail, e.newRail(5 * time.Second)}
	both := func() {
		var wg sync.WaitGroup
		for _, rail := range rails {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := rail.Reconcile(context.Background(), r.IdempotencyKey); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
	}
	e.fake.Settle(r.IdempotencyKey, "success")
	both()
	got := e.outcomes.outcomes(r.PaymentID)
	if len(got) != 2 || got[0] != got[1] || got[0].Rejected {
		t.Fatalf("got %v, want the same success at both", got)
	}
	e.fake.Settle(r.IdempotencyKey, "reversed")
	both()
	alerts := counted(t, rails[0].metrics.alerts.WithLabelValues("reversed")) + counted(t, rails[1].metrics.alerts.WithLabelValues("reversed"))
	if alerts != 1 || e.outcomes.reversed(r.PaymentID) != 2 {
		t.Fatalf("got %v alerts and %d reversal reports, want 1 and 2", alerts, e.outcomes.reversed(r.PaymentID))
	}
}

// TestPayoutWaitsForBalance: Paystack refuses a transfer the balance cannot
// pay; that is the operator's to fix, so the payout errs (and alerts)
// instead of failing the payment, and goes through once topped up.
func TestPayoutWaitsForBalance(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.fake.SetBalance("ZAR", 100)
	r := e.za()
	if out, err := e.rail.Payout(context.Background(), r); err == nil || errors.Is(err, errPending) || out.Rejected {
		t.Fatalf("got %+v, %v; want an error that is neither pending nor a rejection", out, err)
	}
	if got := counted(t, e.rail.metrics.alerts.WithLabelValues("balance")); got != 1 {
		t.Errorf("balance alerts: got %v, want 1", got)
	}
	e.fake.SetBalance("ZAR", 1_000_000)
	e.mustPending(t, e.rail, r)
	if e.fake.Transfers() != 1 {
		t.Fatalf("got %d transfers, want 1", e.fake.Transfers())
	}
}
