package mpesa

import (
	"bytes"
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
	"github.com/ledger/ledger/workers/rails/mpesa/mpesatest"
	"github.com/ledger/ledger/workers/rails/payout"
)

var creds = mpesatest.Credentials{ConsumerKey: "ck_test", ConsumerSecret: "cs_test", ShortCode: "174379",
	PassKey: "bfb279f9aa9bdbcf158e97dd71a467cd", B2CShortCode: "600997", Initiator: "ledgerapi", InitiatorPassword: "Safaricom999!"}

// env is the rail on a database of its own against the fake, its
// callback routes served where the fake sends callbacks.
type env struct {
	pool  *pgxpool.Pool
	fake  *mpesatest.Server
	rail  *Rail
	hook  *httptest.Server
	books *books
	logs  *bytes.Buffer
}

// books is Deposits and Outcomes as the workers would be: a deposit is
// taken once while the payment awaits funds, a settled payout is called
// again and its answer kept.
type books struct {
	mu       sync.Mutex
	rail     func() *Rail
	ended    map[uuid.UUID]bool // payments no longer awaiting funds, unfunded
	deposits map[uuid.UUID][]int64
	settled  map[uuid.UUID][]payout.Outcome
	requests map[uuid.UUID]payout.Request
}

func (b *books) MomoPaid(_ context.Context, _, paymentID uuid.UUID, amount int64, _, _, _ string, _ time.Time) (bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.deposits[paymentID]) > 0 {
		return true, nil
	}
	if b.ended[paymentID] {
		return false, nil
	}
	b.deposits[paymentID] = append(b.deposits[paymentID], amount)
	return true, nil
}

func (b *books) PayoutSettled(ctx context.Context, _, paymentID uuid.UUID) error {
	b.mu.Lock()
	req := b.requests[paymentID]
	b.mu.Unlock()
	out, err := b.rail().Payout(ctx, req)
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.settled[paymentID] = append(b.settled[paymentID], out)
	return nil
}

func (b *books) deposited(id uuid.UUID) []int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]int64(nil), b.deposits[id]...)
}

func (b *books) outcomes(id uuid.UUID) []payout.Outcome {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]payout.Outcome(nil), b.settled[id]...)
}

// syncBuffer is a log sink the callbacks' goroutines write while a test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var logSinks sync.Map // *env -> *syncBuffer

func newEnv(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, testenv.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := eventstore.Migrate(ctx, pool, eventstore.MigrationSet{Component: "mpesa", FS: Migrations}); err != nil {
		t.Fatal(err)
	}
	e := &env{pool: pool, fake: mpesatest.NewServer(t, creds)}
	e.books = &books{rail: func() *Rail { return e.rail }, ended: map[uuid.UUID]bool{}, deposits: map[uuid.UUID][]int64{},
		settled: map[uuid.UUID][]payout.Outcome{}, requests: map[uuid.UUID]payout.Request{}}
	e.hook = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { e.rail.ServeHTTP(w, r) }))
	t.Cleanup(e.hook.Close)
	logSinks.Store(e, &syncBuffer{})
	e.rail = e.newRail(t, 5*time.Second)
	return e
}

// newRail is another process's rail: the same books and provider.
func (e *env) newRail(t *testing.T, timeout time.Duration) *Rail {
	t.Helper()
	credential, err := SecurityCredential(creds.InitiatorPassword, e.fake.Cert())
	if err != nil {
		t.Fatal(err)
	}
	sink, _ := logSinks.Load(e)
	client := NewClient(e.fake.URL(), creds.ConsumerKey, creds.ConsumerSecret, &http.Client{Timeout: timeout})
	cfg := Config{ShortCode: creds.ShortCode, PassKey: creds.PassKey, B2CShortCode: creds.B2CShortCode, Initiator: creds.Initiator,
		SecurityCredential: credential, CallbackURL: e.hook.URL}
	return NewRail(e.pool, client, cfg, e.books, e.books, slog.New(slog.NewTextHandler(sink.(*syncBuffer), nil)), prometheus.NewRegistry())
}

func (e *env) logged() string {
	sink, _ := logSinks.Load(e)
	return sink.(*syncBuffer).String()
}

// eventually waits for cond, failing after a few seconds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func counted(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

const payer = "+254712345678"

// prompt prompts a new payment and returns it and the fake's prompt.
func (e *env) prompt(t *testing.T, rail *Rail, amount int64) (uuid.UUID, mpesatest.Prompt) {
	t.Helper()
	id := uuid.New()
	if err := rail.Prompt(context.Background(), uuid.New(), id, payer, amount); err != nil {
		t.Fatal(err)
	}
	ps := e.fake.Prompts()
	return id, ps[len(ps)-1]
}

func TestPromptPaidOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.fake.CallbacksTwice(true)
	id, p := e.prompt(t, e.rail, 1300)
	if p.Amount != 1300 || p.Phone != "254712345678" || !strings.Contains(p.CallbackURL, CallbackPrefix+"stk/") {
		t.Fatalf("got prompt %+v, want KES 1300 to 254712345678 with a token callback URL", p)
	}
	// Another process prompting the same payment sends nothing.
	other := e.newRail(t, 5*time.Second)
	if err := other.Prompt(context.Background(), uuid.New(), id, payer, 1300); err != nil {
		t.Fatal(err)
	}
	e.fake.Approve(p.CheckoutID)
	eventually(t, "the deposit", func() bool { return len(e.books.deposited(id)) == 1 })
	eventually(t, "both callbacks", func() bool {
		return counted(t, e.rail.metrics.callbacks.WithLabelValues("stk", "ok")) == 2
	})
	if got := e.books.deposited(id); got[0] != 1300 || len(e.fake.Prompts()) != 1 {
		t.Fatalf("got deposits %v from %d prompts, want KES 1300 from one", got, len(e.fake.Prompts()))
	}
	if _, err := e.rail.Settle(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	if n := e.fake.TokensIssued(); n != 1 {
		t.Errorf("got %d OAuth tokens for a prompt and a query, want one, cached", n)
	}
}

func TestPromptCallbackRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.fake.DropCallbacks(true)
	id, p := e.prompt(t, e.rail, 500)
	post := func(path string, body []byte) int {
		resp, err := http.Post(e.hook.URL+path, "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	paid := p
	paid.State, paid.Receipt = "paid", "SKL999"
	token := strings.TrimPrefix(p.CallbackURL, e.hook.URL+CallbackPrefix+"stk/")
	// A forged token: refused and logged.
	if got := post(CallbackPrefix+"stk/"+strings.Repeat("0", 32), mpesatest.STKCallback(paid, time.Now())); got != http.StatusNotFound {
		t.Errorf("forged token: got %d, want 404", got)
	}
	if !strings.Contains(e.logged(), "unknown token") {
		t.Error("a forged token was not logged")
	}
	// The right token with another amount, or another prompt's id.
	more := paid
	more.Amount = 5000
	other := paid
	other.CheckoutID = "ws_CO_forged"
	for _, body := range [][]byte{mpesatest.STKCallback(more, time.Now()), mpesatest.STKCallback(other, time.Now()), []byte(`{"Body":{}}`)} {
		post(CallbackPrefix+"stk/"+token, body)
	}
	if got := e.books.deposited(id); len(got) != 0 {
		t.Fatalf("got deposits %v from refused callbacks, want none", got)
	}
	// A cancelled result, then (out of order) a paid one: the query decides.
	e.fake.Cancel(p.CheckoutID)
	post(CallbackPrefix+"stk/"+token, mpesatest.STKCallback(mpesatest.Prompt{CheckoutID: p.CheckoutID, MerchantID: p.MerchantID}, time.Now()))
	post(CallbackPrefix+"stk/"+token, mpesatest.STKCallback(paid, time.Now()))
	if got := e.books.deposited(id); len(got) != 0 {
		t.Fatalf("got deposits %v for a cancelled prompt, want none", got)
	}
}

func TestPromptWithoutCallbackIsQueried(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.fake.DropCallbacks(true)
	id, p := e.prompt(t, e.rail, 700)
	if open, err := e.rail.Settle(context.Background(), id); err != nil || !open {
		t.Fatalf("got %v, %v while the prompt is open, want it open", open, err)
	}
	e.fake.Approve(p.CheckoutID)
	if open, err := e.rail.Settle(context.Background(), id); err != nil || !open {
		t.Fatalf("got %v, %v after it was paid, want it open (paid)", open, err)
	}
	if got := e.books.deposited(id); len(got) != 1 || got[0] != 700 {
		t.Fatalf("got deposits %v, want KES 700 learned by STK Push Query", got)
	}
	// A cancelled prompt lets its payment expire.
	id2, p2 := e.prompt(t, e.rail, 800)
	e.fake.Cancel(p2.CheckoutID)
	if open, err := e.rail.Settle(context.Background(), id2); err != nil || open {
		t.Fatalf("got %v, %v for a cancelled prompt, want it closed", open, err)
	}
}

func TestPromptLostAnswerIsNotSentAgain(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.fake.SetFault("/mpesa/stkpush/v1/processrequest", mpesatest.Fault{Hang: true})
	e.fake.DropCallbacks(true)
	hasty := e.newRail(t, 200*time.Millisecond)
	id := uuid.New()
	if err := hasty.Prompt(context.Background(), uuid.New(), id, payer, 900); err == nil {
		t.Fatal("a prompt whose answer never came succeeded")
	}
	e.fake.SetFault("/mpesa/stkpush/v1/processrequest", mpesatest.Fault{})
	if err := e.rail.Prompt(context.Background(), uuid.New(), id, payer, 900); err != nil {
		t.Fatal(err)
	}
	ps := e.fake.Prompts()
	if len(ps) != 1 {
		t.Fatalf("got %d prompts, want one: a lost answer is never prompted again", len(ps))
	}
	// Its callback still funds the payment, and names the prompt.
	e.fake.DropCallbacks(false)
	e.fake.Approve(ps[0].CheckoutID)
	eventually(t, "the deposit", func() bool { return len(e.books.deposited(id)) == 1 })
}

func TestPromptPaidAfterExpiryAlerts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id, p := e.prompt(t, e.rail, 400)
	e.books.mu.Lock()
	e.books.ended[id] = true
	e.books.mu.Unlock()
	e.fake.Approve(p.CheckoutID)
	eventually(t, "the late-payment alert", func() bool {
		return counted(t, e.rail.metrics.alerts.WithLabelValues("late_payment")) == 1
	})
	if got := e.books.deposited(id); len(got) != 0 {
		t.Fatalf("got deposits %v on an ended payment, want none", got)
	}
}

func TestPromptRefusedBy500(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.fake.SetFault("/mpesa/stkpush/v1/processrequest", mpesatest.Fault{Status500: 1})
	id := uuid.New()
	if err := e.rail.Prompt(context.Background(), uuid.New(), id, payer, 900); err == nil {
		t.Fatal("a 500 was taken as a prompt sent")
	}
	if err := e.rail.Prompt(context.Background(), uuid.New(), id, payer, 900); err != nil {
		t.Fatal(err)
	}
	if n := len(e.fake.Prompts()); n != 0 {
		t.Fatalf("got %d prompts after a 500, want none: the payer may have been prompted", n)
	}
}

func (e *env) payoutRequest(amount string) payout.Request {
	id := uuid.New()
	r := payout.Request{PaymentID: id, TenantID: uuid.New(), IdempotencyKey: id.String(), Rail: "MOMO",
		Amount: decimal.RequireFromString(amount), Currency: "KES", PhoneNumber: "+254722000111", Name: "Mama Mboga"}
	e.books.mu.Lock()
	e.books.requests[id] = r
	e.books.mu.Unlock()
	return r
}

func TestPayoutB2C(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.fake.CallbacksTwice(true)
	r := e.payoutRequest("2500")
	if out, err := e.rail.Payout(context.Background(), r); !errors.Is(err, payout.ErrPending) {
		t.Fatalf("got %+v, %v; want pending until the result", out, err)
	}
	eventually(t, "the result", func() bool { return len(e.books.outcomes(r.PaymentID)) == 2 })
	pay := e.fake.Payments()[r.IdempotencyKey]
	for _, out := range e.books.outcomes(r.PaymentID) {
		if out.Rejected || out.PayoutID != pay.Receipt {
			t.Fatalf("got %+v, want success with %s", out, pay.Receipt)
		}
	}
	if pay.Amount != 2500 || pay.Phone != "254722000111" || pay.Requests != 1 {
		t.Fatalf("got %+v, want KES 2500 to 254722000111 asked once", pay)
	}
	// A failed result after the success disagrees: a status query decides, the success stands.
	token := tokenOf(t, e, r.IdempotencyKey)
	resp, err := http.Post(e.hook.URL+CallbackPrefix+"b2c/"+token, "application/json", bytes.NewReader(mpesatest.B2CResult(pay, 2001)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	eventually(t, "the status query", func() bool { return e.fake.StatusQueries() == 1 })
	out, err := e.rail.Payout(context.Background(), r)
	if err != nil || out.PayoutID != pay.Receipt {
		t.Fatalf("got %+v, %v, want the success kept", out, err)
	}
}

func tokenOf(t *testing.T, e *env, originator string) string {
	t.Helper()
	var token string
	if err := e.pool.QueryRow(context.Background(), `SELECT token FROM mpesa_payouts WHERE originator_id = $1`, originator).Scan(&token); err != nil {
		t.Fatal(err)
	}
	return token
}

func TestPayoutCrashRecoveredByTransactionStatus(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// M-Pesa pays, its answer and its result are lost: the process died.
	e.fake.SetFault("/mpesa/b2c/v3/paymentrequest", mpesatest.Fault{Hang: true})
	e.fake.DropCallbacks(true)
	r := e.payoutRequest("1000")
	if _, err := e.newRail(t, 200*time.Millisecond).Payout(context.Background(), r); err == nil || errors.Is(err, payout.ErrPending) {
		t.Fatalf("got %v, want the lost answer's error", err)
	}
	e.fake.SetFault("/mpesa/b2c/v3/paymentrequest", mpesatest.Fault{})
	e.fake.DropCallbacks(false)
	// The restarted process asks for the status instead of paying again.
	if _, err := e.rail.Payout(context.Background(), r); !errors.Is(err, payout.ErrPending) {
		t.Fatalf("got %v, want pending while the status is asked", err)
	}
	eventually(t, "the status result", func() bool { return len(e.books.outcomes(r.PaymentID)) == 1 })
	pay := e.fake.Payments()[r.IdempotencyKey]
	if got := e.books.outcomes(r.PaymentID)[0]; got.Rejected || got.PayoutID != pay.Receipt || pay.Requests != 1 || len(e.fake.Payments()) != 1 {
		t.Fatalf("got %+v after %d B2C requests, want one payment, recovered as %s", got, pay.Requests, pay.Receipt)
	}
}

func TestPayoutFaults(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// A 500: unknown whether M-Pesa took it, so it is never sent again;
	// the status query finds nothing and an operator is alerted.
	e.fake.SetFault("/mpesa/b2c/v3/paymentrequest", mpesatest.Fault{Status500: 1})
	r := e.payoutRequest("1000")
	if _, err := e.rail.Payout(context.Background(), r); err == nil {
		t.Fatal("a 500 was taken as an answer")
	}
	if _, err := e.rail.Payout(context.Background(), r); !errors.Is(err, payout.ErrPending) {
		t.Fatalf("got %v, want pending", err)
	}
	eventually(t, "the lost alert", func() bool { return counted(t, e.rail.metrics.alerts.WithLabelValues("lost")) == 1 })
	if n := len(e.fake.Payments()); n != 0 {
		t.Fatalf("got %d payments, want none", n)
	}
	// A bad credential is M-Pesa's refusal: the payout fails, nothing was paid.
	bad := e.newRail(t, 5*time.Second)
	bad.cfg.SecurityCredential = "bm90IGVuY3J5cHRlZA=="
	out, err := bad.Payout(context.Background(), e.payoutRequest("1000"))
	if err != nil || !out.Rejected || !strings.Contains(out.Reason, "refused") {
		t.Fatalf("got %+v, %v; want rejected by M-Pesa", out, err)
	}
	// Amounts B2C cannot pay are rejected before any call.
	out, err = e.rail.Payout(context.Background(), e.payoutRequest("10.50"))
	if err != nil || !out.Rejected {
		t.Fatalf("got %+v, %v; want a fractional amount rejected", out, err)
	}
	// A forged result token.
	resp, err := http.Post(e.hook.URL+CallbackPrefix+"b2c/forged", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("forged token: got %d %s, want 404", resp.StatusCode, body)
	}
}

func TestSamePhone(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		got  string
		want bool
	}{{"254712345678", true}, {"254712345679", false}, {"2547 ***** 678", true}, {"2547*****679", false}, {"*****678", false}, {"", false}} {
		if got := samePhone(c.got, "254712345678"); got != c.want {
			t.Errorf("samePhone(%q): got %v, want %v", c.got, got, c.want)
		}
	}
}

func TestPromptWithoutPhone(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := uuid.New()
	for range 2 {
		if err := e.rail.Prompt(context.Background(), uuid.New(), id, "", 500); err != nil {
			t.Fatal(err)
		}
	}
	if open, err := e.rail.Settle(context.Background(), id); err != nil || open || len(e.fake.Prompts()) != 0 {
		t.Fatalf("got %v, %v after %d prompts; want none sent and the payment left to expire", open, err, len(e.fake.Prompts()))
	}
	if n := strings.Count(e.logged(), "no momo number"); n != 1 {
		t.Errorf("got %d warnings, want one", n)
	}
}
