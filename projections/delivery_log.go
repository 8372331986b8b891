package projections

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledger/ledger/domain"
)

// DeliveryLog is the append-only log of webhook delivery attempts
// (webhook_attempts) and the work list the attempts move on
// (webhook_deliveries, whose rows the status events write). Unlike the read
// models it is not written from the events, so a rebuild of the read models
// must leave it as it is: how often a receiver was called is operational,
// not a fact of the ledger.
type DeliveryLog struct{ pool *pgxpool.Pool }

// NewDeliveryLog returns the delivery log in pool's database.
func NewDeliveryLog(pool *pgxpool.Pool) *DeliveryLog { return &DeliveryLog{pool: pool} }

// RecordWebhookAttempt logs attempt a of a delivery of tenantID's payment
// paymentID and moves that delivery on: gone from the work list after a
// 2xx, else pending until a.NextAttemptAt or, with none, exhausted. A
// delivered row is deleted rather than marked: nothing reads it again (the
// log is its history), and a delete writes no new row version with
// another copy of its payment.
//
// Both writes are one statement, so one transaction of its own, which the
// dispatcher may send again when its answer is lost: an attempt already
// logged is kept as it is, and the delivery moves to the same place again.
func (l *DeliveryLog) RecordWebhookAttempt(ctx context.Context, tenantID, paymentID uuid.UUID, a domain.PaymentWebhookAttempted) error {
	delivery := `DELETE FROM webhook_deliveries WHERE event_id = $1`
	args := []any{a.EventID, a.Attempt, tenantID, paymentID, a.Type, a.At, a.StatusCode, a.DurationMs, a.Error}
	if !a.Delivered {
		status := "pending"
		if a.NextAttemptAt == nil {
			status = "exhausted"
		}
		delivery = `UPDATE webhook_deliveries SET status = $10, attempts = $2, next_attempt_at = coalesce($11, next_attempt_at),
			lease_until = NULL WHERE event_id = $1`
		args = append(args, status, a.NextAttemptAt)
	}
	_, err := l.pool.Exec(ctx, `WITH attempt AS (
			INSERT INTO webhook_attempts (event_id, attempt, tenant_id, payment_id, type, at, status_code, duration_ms, error)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT DO NOTHING)
		`+delivery, args...)
	if err != nil {
		return fmt.Errorf("record webhook attempt: %w", err)
	}
	return nil
}

// ListWebhookAttempts returns every delivery attempt of a payment's
// webhooks, oldest first.
func (l *DeliveryLog) ListWebhookAttempts(ctx context.Context, tenantID, paymentID uuid.UUID) ([]domain.WebhookAttemptItem, error) {
	rows, err := l.pool.Query(ctx, `SELECT event_id, type, attempt, at, status_code, duration_ms, error FROM webhook_attempts
		WHERE tenant_id = $1 AND payment_id = $2 ORDER BY at, event_id, attempt`, tenantID, paymentID)
	if err != nil {
		return nil, fmt.Errorf("list webhook attempts: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (domain.WebhookAttemptItem, error) {
		var a domain.WebhookAttemptItem
		err := r.Scan(&a.EventID, &a.Type, &a.Attempt, &a.At, &a.StatusCode, &a.DurationMs, &a.Error)
		a.At = a.At.UTC()
		return a, err
	})
}
