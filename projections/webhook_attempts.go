package projections

import (
	"github.com/jackc/pgx/v5"

	"github.com/ledger/ledger/domain"
)

// ProjectAttempts queues the statements of webhook attempts appended at
// their payment's head (eventstore.Store.AppendAtHead).
func (Projector) ProjectAttempts(b *pgx.Batch, recs []domain.Record) error {
	for _, r := range recs {
		e, err := r.Decode()
		if err != nil {
			return err
		}
		if a, ok := e.(domain.PaymentWebhookAttempted); ok {
			projectWebhookAttempt(b, r, a)
		}
	}
	return nil
}

// projectWebhookAttempt records an attempt and moves its delivery on: gone
// from the work list after a 2xx, pending until the next attempt, or
// exhausted. A delivered row is deleted rather than marked: nothing reads
// it again (webhook_attempts is its history), and a delete writes neither
// a new row version nor another copy of its payment.
//
// The attempt is appended at the stream's head (eventstore.Store.AppendAtHead),
// so r.StreamVersion is not known here: nothing of the payment changes but
// its version, which is one more than the row's, since every event of the
// stream moves the row in the event's own transaction. Its large state is
// neither rebuilt nor written again.
//
// The three writes are one statement (data-modifying CTEs run whatever the
// outer statement returns): every webhook sent records an attempt, and each
// statement of a batch costs the server a bind and an executor start.
func projectWebhookAttempt(b *pgx.Batch, r domain.Record, e domain.PaymentWebhookAttempted) {
	delivery := `DELETE FROM webhook_deliveries WHERE event_id = $3`
	args := []any{r.RecordedAt, r.StreamID, e.EventID, e.Attempt, r.TenantID, e.Type, e.At, e.StatusCode, e.DurationMs, e.Error}
	if !e.Delivered {
		status := "pending"
		if e.NextAttemptAt == nil {
			status = "exhausted"
		}
		delivery = `UPDATE webhook_deliveries SET status = $11, attempts = $4, next_attempt_at = coalesce($12, next_attempt_at),
			lease_until = NULL WHERE event_id = $3`
		args = append(args, status, e.NextAttemptAt)
	}
	b.Queue(`WITH attempt AS (
			INSERT INTO webhook_attempts (event_id, attempt, tenant_id, payment_id, type, at, status_code, duration_ms, error)
			VALUES ($3, $4, $5, $2, $6, $7, $8, $9, $10) ON CONFLICT DO NOTHING),
		delivery AS (`+delivery+`)
		UPDATE payments SET version = version + 1, updated_at = $1 WHERE id = $2`, args...)
}
