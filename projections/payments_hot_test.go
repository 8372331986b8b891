package projections

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ledger/ledger/domain"
)

// TestWebhookAttemptUpdatesThePaymentInPlace: a webhook attempt moves only
// its payment's version and updated_at, and no index of the payments holds
// either (migration 0019), so the update is HOT: no new entry in any of the
// table's indexes. An index on updated_at would make every attempt write
// one into each of them.
func TestWebhookAttemptUpdatesThePaymentInPlace(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx, pool := f.ctx, f.pool
	payment, tenant, at := uuid.New(), uuid.New(), time.Now().UTC().Truncate(time.Millisecond)
	if _, err := pool.Exec(ctx, `INSERT INTO payments (id, tenant_id, user_id, merchant_id, status, state, version, created_at, updated_at)
		VALUES ($1, $2, $3, $4, 'deposited', '{"status":"deposited"}', 2, $5, $5)`,
		payment, tenant, uuid.New(), uuid.New(), at); err != nil {
		t.Fatal(err)
	}
	code := 500
	attempt := domain.PaymentWebhookAttempted{EventID: uuid.New(), Type: "payment.deposited", Attempt: 1,
		StatusCode: &code, NextAttemptAt: new(at.Add(time.Minute)), At: at.Add(time.Second)}
	rec := domain.Record{ID: uuid.New(), TenantID: tenant, StreamType: "payment", StreamID: payment,
		Type: attempt.EventType(), RecordedAt: at.Add(time.Second)}
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		projectWebhookAttempt(b, rec, attempt)
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return err
		}
		var updates, hot int64
		if err := tx.QueryRow(ctx, `SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_xact_user_tables
			WHERE relid = 'payments'::regclass`).Scan(&updates, &hot); err != nil {
			return err
		}
		if updates != 1 || hot != 1 {
			t.Errorf("the attempt's update of the payment: %d updates, %d of them HOT; want 1 and 1", updates, hot)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var version int
	var updated time.Time
	if err := pool.QueryRow(ctx, `SELECT version, updated_at FROM payments WHERE id = $1`, payment).Scan(&version, &updated); err != nil {
		t.Fatal(err)
	}
	if version != 3 || !updated.Equal(rec.RecordedAt) {
		t.Errorf("payment after the attempt: version %d, updated_at %v; want 3, %v", version, updated, rec.RecordedAt)
	}
}
