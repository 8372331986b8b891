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
