package workers

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/workers/rails/payout"
)

// A 2xx answered while the database fails over is recorded once the
// database is back, within the delivery's lease, and not sent again. Here
// the receiver's answer coincides with the primary's demotion: from then
// on every session of the database is read-only, as a standby's are (each
// write fails with SQLSTATE 25006), and the pool's open connections are
// cut, as a demotion cuts them. Two seconds later it is writable again, as
// a promoted standby is.
func TestWebhookRecordedThroughFailover(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	admin, err := pgx.ConnectConfig(ctx, e.pool.Config().ConnConfig)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close(context.Background()) })
	db := pgx.Identifier{e.pool.Config().ConnConfig.Database}.Sanitize()
	// ALTER DATABASE reaches the sessions that open after it: the others
	// are ended, and the pool opens new ones.
	readOnly := func(on bool) error {
		if _, err := admin.Exec(ctx, "ALTER DATABASE "+db+" SET default_transaction_read_only = "+map[bool]string{true: "on", false: "off"}[on]); err != nil {
			return err
		}
		_, err := admin.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid()`)
		return err
	}
	var requests atomic.Int32
	demoted := make(chan error, 1)
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if requests.Add(1) == 1 {
			demoted <- readOnly(true)
		}
	}))
	t.Cleanup(rc.Close)
	id := uuid.Must(uuid.NewV7())
	e.createdWith(t, id, 1500, rc.URL, func(sats int64) domain.LightningInvoice {
		return domain.LightningInvoice{PaymentRequest: "lnbcrt1", AmountSats: sats}
	})
	w := New(Config{Stream: e.stream.Name, SubjectPrefix: e.stream.SubjectPrefix, WebhookPrivate: true,
		RenderPayment: func(domain.PaymentSnapshot) ([]byte, error) { return []byte("{}"), nil },
		OpenSecret:    func(_ context.Context, stored string) (string, error) { return stored, nil }},
		e.pool, e.js, e.payments, fixedPrices{}, payout.NewSandbox(e.pool, 0), slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.runWebhooks(runCtx) }()
	defer func() { stop(); <-done }()

	select {
	case err := <-demoted:
		if err != nil {
			t.Fatalf("make the database read-only: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the delivery was never sent")
	}
	time.Sleep(2 * time.Second) // the failover: records fail meanwhile
	if err := readOnly(false); err != nil {
		t.Fatalf("make the database writable: %v", err)
	}
	// Well within the lease: a record that gave up leaves the delivery
	// pending until the lease ends, then sends it again.
	var pending, delivered int
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		err := admin.QueryRow(ctx, `SELECT (SELECT count(*) FROM webhook_deliveries WHERE payment_id = $1),
			(SELECT count(*) FROM webhook_attempts WHERE payment_id = $1 AND status_code = 200)`, id).Scan(&pending, &delivered)
		if err != nil {
			t.Fatal(err)
		}
		if pending == 0 || time.Now().After(deadline) {
			break
		}
	}
	if pending != 0 || delivered != 1 {
		t.Fatalf("got %d deliveries pending and %d attempts recorded 2xx, want 0 and 1: the 2xx was not recorded after the failover", pending, delivered)
	}
	if n := requests.Load(); n != 1 {
		t.Fatalf("receiver got %d requests, want 1", n)
	}
}

// recordWatch is the payments' delivery log with each RecordWebhookAttempts
// call reported on calls (its records' count) and, while hold is open,
// held until it is closed; fail makes the calls fail, as a database that
// is away does.
type recordWatch struct {
	payments
	calls chan int
	hold  chan struct{}
	fail  atomic.Bool
}

func (r *recordWatch) RecordWebhookAttempts(ctx context.Context, recs []domain.WebhookAttemptRecord, now, leaseNext time.Time) ([]domain.WebhookDelivery, error) {
	r.calls <- len(recs)
	<-r.hold
	if r.fail.Load() {
		return nil, errors.New("database away")
	}
	return r.payments.RecordWebhookAttempts(ctx, recs, now, leaseNext)
}

// deliveredPayments makes n deposited payments with a webhook and leases
// each one's payment.created delivery, the attempt to record.
func deliveredPayments(t *testing.T, e env, n int) []domain.WebhookDelivery {
	t.Helper()
	ctx := context.Background()
	ids := make([]uuid.UUID, n)
	for i := range ids {
		ids[i] = e.depositedWith(t, 1500, "http://127.0.0.1:1/hook")
	}
	now := time.Now()
	leased, err := e.payments.ClaimPaymentsWebhooks(ctx, ids, now, now.Add(leaseFor))
	if err != nil || len(leased) != n {
		t.Fatalf("claim: got %d deliveries, %v; want %d", len(leased), err, n)
	}
	return leased
}

func delivered(d domain.WebhookDelivery) domain.PaymentWebhookAttempted {
	return domain.NewWebhookAttempted(domain.WebhookAttempt{EventID: d.EventID, Type: d.Type, Attempt: 1,
		StatusCode: 200, Delivered: true, Now: time.Now()}, nil)
}

// Records asked for while every batch is being written wait, and then go
// together, in one call (one round trip and one transaction); each gets
// its own payment's next delivery, leased with it.
func TestRecordsAskedForMeanwhileShareOneBatch(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	leased := deliveredPayments(t, e, recordBatches+3)
	watch := &recordWatch{payments: e.payments, calls: make(chan int, 10), hold: make(chan struct{})}
	w := New(Config{Stream: e.stream.Name, SubjectPrefix: e.stream.SubjectPrefix}, e.pool, e.js, watch, fixedPrices{},
		payout.NewSandbox(e.pool, 0), slog.New(slog.DiscardHandler), nil)
	type result struct {
		d    domain.WebhookDelivery
		next []domain.WebhookDelivery
		err  error
	}
	results := make(chan result, len(leased))
	record := func(d domain.WebhookDelivery) {
		next, err := w.record(context.Background(), d, delivered(d), true)
		results <- result{d, next, err}
	}
	for _, d := range leased[:recordBatches] {
		go record(d)
	}
	for range recordBatches {
		if n := <-watch.calls; n != 1 {
			t.Fatalf("a record asked for with a batch free went in a batch of %d, want 1", n)
		}
	}
	for _, d := range leased[recordBatches:] {
		go record(d)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		w.records.mu.Lock()
		waiting := len(w.records.waiting)
		w.records.mu.Unlock()
		if waiting == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d records waiting, want 3", waiting)
		}
	}
	close(watch.hold)
	if n := <-watch.calls; n != 3 {
		t.Fatalf("the records asked for meanwhile went in a batch of %d, want 3", n)
	}
	for range leased {
		r := <-results
		if r.err != nil || len(r.next) != 1 || r.next[0].PaymentID != r.d.PaymentID || r.next[0].Type != "payment.deposited" {
			t.Fatalf("record of %s: got next %+v, %v; want its payment.deposited delivery", r.d.PaymentID, r.next, r.err)
		}
	}
	var attempts, pending int
	if err := e.pool.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM webhook_attempts),
		(SELECT count(*) FROM webhook_deliveries WHERE type = 'payment.created')`).Scan(&attempts, &pending); err != nil {
		t.Fatal(err)
	}
	if attempts != len(leased) || pending != 0 {
		t.Fatalf("got %d attempts logged and %d payment.created deliveries pending, want %d and 0", attempts, pending, len(leased))
	}
}

// A batch that fails leaves each of its records to be made again alone,
// without the next delivery's lease, which must never cost a 2xx its
// record.
func TestRecordsOfAFailedBatchAreMadeAlone(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	leased := deliveredPayments(t, e, 1)
	watch := &recordWatch{payments: e.payments, calls: make(chan int, 10), hold: make(chan struct{})}
	close(watch.hold)
	watch.fail.Store(true)
	w := New(Config{Stream: e.stream.Name, SubjectPrefix: e.stream.SubjectPrefix}, e.pool, e.js, watch, fixedPrices{},
		payout.NewSandbox(e.pool, 0), slog.New(slog.DiscardHandler), nil)
	done := make(chan error, 1)
	var next []domain.WebhookDelivery
	go func() {
		var err error
		next, err = w.record(context.Background(), leased[0], delivered(leased[0]), true)
		done <- err
	}()
	<-watch.calls // the batch, failing
	<-watch.calls // alone, failing
	watch.fail.Store(false)
	if err := <-done; err != nil || len(next) != 0 {
		t.Fatalf("record after a failed batch: got next %+v, %v; want recorded, nothing leased", next, err)
	}
	var attempts int
	if err := e.pool.QueryRow(context.Background(), `SELECT count(*) FROM webhook_attempts`).Scan(&attempts); err != nil || attempts != 1 {
		t.Fatalf("got %d attempts logged (%v), want 1", attempts, err)
	}
}
