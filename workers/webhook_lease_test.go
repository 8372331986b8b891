package workers

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/projections"
	"github.com/ledger/ledger/workers/rails/payout"
)

// An attempt that could not start in time to end, recorded, within its
// delivery's lease is not made: past the lease another process may claim
// the delivery and send it, and this one's late send would repeat it. Here
// the webhook secret takes longer to open than the send window (the
// lease, less the attempt's timeout and its record's retries) allows.
func TestWebhookNotSentPastItsLease(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var requests atomic.Int32
	rc := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { requests.Add(1) }))
	t.Cleanup(rc.Close)
	id := uuid.Must(uuid.NewV7())
	e.createdWith(t, id, 1500, rc.URL, func(sats int64) domain.LightningInvoice {
		return domain.LightningInvoice{PaymentRequest: "lnbcrt1", AmountSats: sats}
	})
	sendWindow := leaseFor - 10*time.Second - recordFor
	opened := make(chan struct{}, 1)
	w := New(Config{Stream: e.stream.Name, SubjectPrefix: e.stream.SubjectPrefix, WebhookPrivate: true,
		RenderPayment: func(domain.PaymentSnapshot) ([]byte, error) { return []byte("{}"), nil },
		OpenSecret: func(_ context.Context, stored string) (string, error) {
			select {
			case opened <- struct{}{}:
			default:
			}
			time.Sleep(sendWindow + time.Second) // a database slow to answer, ignoring the deadline
			return stored, nil
		}},
		e.pool, e.js, e.payments, fixedPrices{}, payout.NewSandbox(e.pool, 0), slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.runWebhooks(ctx) }()
	defer func() { stop(); <-done }()
	select {
	case <-opened:
	case <-time.After(30 * time.Second):
		t.Fatal("the delivery was never claimed")
	}
	time.Sleep(sendWindow + 3*time.Second) // the open returns a second past the window; a send would follow at once
	if n := requests.Load(); n != 0 {
		t.Fatalf("receiver got %d requests, want none: the attempt could not end within the lease", n)
	}
	var attempts int
	if err := e.pool.QueryRow(context.Background(), `SELECT count(*) FROM webhook_attempts WHERE payment_id = $1`, id).Scan(&attempts); err != nil || attempts != 0 {
		t.Fatalf("attempts recorded: %d (%v), want 0", attempts, err)
	}
}

// The record of a 2xx leases the payment's next delivery in the same
// transaction, and only then: a failed attempt leaves its delivery
// pending, so the next status still waits behind it.
func TestWebhookRecordLeasesTheNext(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	id := e.depositedWith(t, 1500, "http://127.0.0.1:1/hook")
	claim := func() []domain.WebhookDelivery {
		t.Helper()
		now := time.Now()
		got, err := e.payments.ClaimPaymentsWebhooks(ctx, []uuid.UUID{id}, now, now.Add(leaseFor))
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	record := func(d domain.WebhookDelivery, attempt int, delivered bool) []domain.WebhookDelivery {
		t.Helper()
		now := time.Now()
		a := domain.NewWebhookAttempted(domain.WebhookAttempt{EventID: d.EventID, Type: d.Type, Attempt: attempt,
			StatusCode: map[bool]int{true: 200, false: 500}[delivered], Delivered: delivered, Now: now}, []time.Duration{0})
		next, err := e.payments.RecordWebhookAttempts(ctx, []domain.WebhookAttemptRecord{{TenantID: e.tenant, PaymentID: id, Attempt: a, LeaseNext: true}},
			now, now.Add(leaseFor))
		if err != nil {
			t.Fatal(err)
		}
		return next
	}
	first := claim()
	if len(first) != 1 || first[0].Type != "payment.created" {
		t.Fatalf("first claim: got %+v, want the payment.created delivery", first)
	}
	if got := claim(); len(got) != 0 {
		t.Fatalf("claim while payment.created is leased: got %d deliveries, want none", len(got))
	}
	if next := record(first[0], 1, false); len(next) != 0 {
		t.Fatalf("a failed attempt's record leased %+v, want nothing: payment.created is still pending", next)
	}
	if next := record(first[0], 2, true); len(next) != 1 || next[0].Type != "payment.deposited" || next[0].Attempts != 0 {
		t.Fatalf("the 2xx's record: got %+v, want the payment.deposited delivery, leased", next)
	}
	if got := claim(); len(got) != 0 {
		t.Fatalf("claim after the record leased payment.deposited: got %d deliveries, want none", len(got))
	}
}

// A claim that finds the payment's earliest delivery locked by its
// record waits for that record and, the delivery gone, leases the
// payment's next one: the status it was asked for. (Reading the earliest
// before taking its lock, it found nothing, and that status waited for
// the dispatcher.)
func TestWebhookClaimBehindARecordLeasesTheNext(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	id := e.depositedWith(t, 1500, "http://127.0.0.1:1/hook")
	// The record of payment.created's 2xx, held open: its delivery deleted
	// and still locked.
	record, err := e.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer record.Rollback(ctx)
	if tag, err := record.Exec(ctx, `DELETE FROM webhook_deliveries WHERE payment_id = $1 AND type = 'payment.created'`, id); err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("delete payment.created's delivery: %v (%d rows)", err, tag.RowsAffected())
	}
	claimed := make(chan []domain.WebhookDelivery, 1)
	go func() {
		now := time.Now()
		got, err := e.payments.ClaimPaymentsWebhooks(ctx, []uuid.UUID{id}, now, now.Add(leaseFor))
		if err != nil {
			t.Error(err)
		}
		claimed <- got
	}()
	waitForLockWait(t, e.pool)
	if err := record.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got := <-claimed; len(got) != 1 || got[0].Type != "payment.deposited" {
		t.Fatalf("claim behind the record: got %+v, want the payment.deposited delivery", got)
	}
}

// waitForLockWait returns once a session of pool's database waits for a
// row lock, and fails the test if none does within ten seconds.
func waitForLockWait(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		var waiting bool
		if err := pool.QueryRow(context.Background(), `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock')`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting {
			return
		}
	}
	t.Fatal("no session waited for a lock within 10s")
}

// A delivery its sender leased but did not attempt (too late in its lease
// to send it) is given back at once: left leased, it, and every later
// status of its payment, waited for the whole lease.
func TestWebhookNotAttemptedIsReleased(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	id := uuid.Must(uuid.NewV7())
	e.createdWith(t, id, 1500, "http://127.0.0.1:1/hook", func(sats int64) domain.LightningInvoice {
		return domain.LightningInvoice{PaymentRequest: "lnbcrt1", AmountSats: sats}
	})
	w := New(Config{Stream: e.stream.Name, SubjectPrefix: e.stream.SubjectPrefix, WebhookPrivate: true,
		RenderPayment: func(domain.PaymentSnapshot) ([]byte, error) { return []byte("{}"), nil },
		OpenSecret:    func(_ context.Context, stored string) (string, error) { return stored, nil }},
		e.pool, e.js, e.payments, fixedPrices{}, payout.NewSandbox(e.pool, 0), slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	now := time.Now()
	// A lease too short for an attempt and its record: as one whose
	// sender reached it late.
	leased, err := e.payments.ClaimPaymentsWebhooks(ctx, []uuid.UUID{id}, now, now.Add(time.Second))
	if err != nil || len(leased) != 1 {
		t.Fatalf("claim: got %d deliveries, %v; want 1", len(leased), err)
	}
	if delivered, next := w.deliver(ctx, leased[0]); delivered || len(next) != 0 {
		t.Fatalf("deliver: got delivered %v, next %+v; want no attempt", delivered, next)
	}
	again, err := e.payments.ClaimPaymentsWebhooks(ctx, []uuid.UUID{id}, now, now.Add(leaseFor))
	if err != nil || len(again) != 1 || again[0].EventID != leased[0].EventID {
		t.Fatalf("claim after the delivery was not attempted: got %+v, %v; want it back at once", again, err)
	}
}

// A lease runs from when its claim is sent, not from when its sender began
// to wait for a connection: under load that wait took seconds of the few
// in which a leased delivery must be sent.
func TestWebhookLeaseRunsFromItsClaim(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	id := uuid.Must(uuid.NewV7())
	e.createdWith(t, id, 1500, "http://127.0.0.1:1/hook", func(sats int64) domain.LightningInvoice {
		return domain.LightningInvoice{PaymentRequest: "lnbcrt1", AmountSats: sats}
	})
	cfg := e.pool.Config().Copy()
	cfg.MaxConns = 1
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	held, err := pool.Acquire(ctx) // the pool's only connection, busy elsewhere
	if err != nil {
		t.Fatal(err)
	}
	const busy = 500 * time.Millisecond
	go func() { time.Sleep(busy); held.Release() }()
	now := time.Now()
	got, err := projections.NewDeliveryLog(pool).ClaimPaymentsWebhooks(ctx, []uuid.UUID{id}, now, now.Add(leaseFor))
	if err != nil || len(got) != 1 {
		t.Fatalf("claim: got %d deliveries, %v; want 1", len(got), err)
	}
	if least := now.Add(leaseFor + busy); got[0].LeaseUntil.Before(least) {
		t.Errorf("lease ends %v after the claim began, want at least %v: the wait for a connection was taken from it",
			got[0].LeaseUntil.Sub(now), leaseFor+busy)
	}
	var stored time.Time
	if err := e.pool.QueryRow(ctx, `SELECT lease_until FROM webhook_deliveries WHERE event_id = $1`, got[0].EventID).Scan(&stored); err != nil ||
		!stored.Equal(got[0].LeaseUntil.Truncate(time.Microsecond)) {
		t.Errorf("stored lease_until %v (%v), want the lease returned, %v", stored, err, got[0].LeaseUntil)
	}
}

// A new delivery is its writer's for the handoff: the writer's claim (one
// statement for several payments, each payment's earliest pending
// delivery) takes it at once, and the dispatchers' claim only once the
// handoff has passed. Due to every claimer at once, the dispatchers took
// most new deliveries from under the fast path.
func TestNewDeliveryHandedOffToItsWriter(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	invoice := func(sats int64) domain.LightningInvoice {
		return domain.LightningInvoice{PaymentRequest: "lnbcrt1", AmountSats: sats}
	}
	a, b, c := uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7())
	for _, id := range []uuid.UUID{a, b, c} {
		e.createdWith(t, id, 1500, "http://127.0.0.1:1/hook", invoice)
	}
	// a's deposit writes a second delivery, behind payment.created.
	if _, err := e.payments.ExecutePayment(ctx, paymentRef(e.tenant, a), domain.Metadata{},
		func(p domain.Payment) ([]domain.Event, error) {
			return domain.DecideDeposit(p, domain.RecordDeposit{Amount: p.Outstanding(), Now: time.Now()})
		}); err != nil {
		t.Fatal(err)
	}
	var first, last time.Time // each delivery is due to the dispatchers a handoff after it was written
	if err := e.pool.QueryRow(ctx, `SELECT min(occurred_at), max(occurred_at) FROM webhook_deliveries`).Scan(&first, &last); err != nil {
		t.Fatal(err)
	}
	within := first.Add(domain.WebhookHandoff - time.Millisecond)
	if got, err := e.payments.ClaimWebhooks(ctx, within, within.Add(leaseFor), claimBatch); err != nil || len(got) != 0 {
		t.Fatalf("dispatchers' claim within the handoff: got %d deliveries (%v), want none", len(got), err)
	}
	got, err := e.payments.ClaimPaymentsWebhooks(ctx, []uuid.UUID{a, b}, within, within.Add(leaseFor))
	if err != nil {
		t.Fatal(err)
	}
	byPayment := map[uuid.UUID]string{}
	for _, d := range got {
		byPayment[d.PaymentID] = d.Type
	}
	if len(got) != 2 || byPayment[a] != "payment.created" || byPayment[b] != "payment.created" {
		t.Fatalf("writer's claim of a and b: got %v, want each one's payment.created (a's deposited waits behind it)", byPayment)
	}
	after := last.Add(domain.WebhookHandoff)
	got, err = e.payments.ClaimWebhooks(ctx, after, after.Add(leaseFor), claimBatch)
	if err != nil || len(got) != 1 || got[0].PaymentID != c {
		t.Fatalf("dispatchers' claim after the handoff: got %+v (%v), want c's delivery alone (a's and b's are leased)", got, err)
	}
}
