package projections

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ledger/ledger/domain"
)

// projectPayment queues the statements that apply one payment event to the
// payments read models.
func projectPayment(b *pgx.Batch, r domain.Record, e domain.Event) {
	switch e := e.(type) {
	case domain.PaymentCreated:
		// The event's data is the payment's JSON (PaymentCreated embeds
		// Payment), so it is the row's state as it is, and the state its
		// delivery carries.
		b.Queue(`INSERT INTO payments (id, tenant_id, user_id, merchant_id, status, state, version, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)`, r.StreamID, r.TenantID, e.UserID, e.MerchantID, e.Status,
			string(r.Data), r.StreamVersion, r.RecordedAt)
		b.Queue(`INSERT INTO payment_deadlines (payment_id, tenant_id, expires_at) VALUES ($1, $2, $3)`,
			r.StreamID, r.TenantID, e.ExpiresAt)
		if e.WebhookURL != "" {
			b.Queue(`INSERT INTO webhook_deliveries (event_id, tenant_id, payment_id, stream_version, type, occurred_at, payment, next_attempt_at)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $6)`, r.ID, r.TenantID, r.StreamID, r.StreamVersion, r.Type, r.RecordedAt, string(r.Data))
		}
	case domain.PaymentDocumentAttached:
		b.Queue(`INSERT INTO payment_documents (id, tenant_id, payment_id, file_name, content_type, size, sha256, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, e.DocumentID, r.TenantID, r.StreamID, e.FileName, e.ContentType,
			e.Size, e.SHA256, e.At)
		mergePayment(b, r, e, false)
	case domain.PaymentWebhookAttempted:
		projectWebhookAttempt(b, r, e)
	default:
		status := domain.StatusOf(e)
		mergePayment(b, r, e, status != "")
		if status != "" && status != domain.StatusTransferring && status != domain.StatusSuccess { // those two never follow created
			b.Queue(`DELETE FROM payment_deadlines WHERE payment_id = $1`, r.StreamID)
		}
	}
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

// mergePayment merges what e changes into the row's state
// (domain.PaymentChanges, the same fold as domain.ApplyPayment) and appends
// its status-log line. The state is stored as json (migration 0014) and
// merged as jsonb: the sub-select parses it once (OFFSET 0 keeps the
// planner from pulling it up, which would cast the state once per use),
// and the assignment stores the merged value's text. With delivery (a
// status event), the same statement adds the event's webhook delivery when
// the payment has a webhookUrl, with the state it has just written: no
// second statement reads the row back and decompresses its state.
func mergePayment(b *pgx.Batch, r domain.Record, e domain.Event, delivery bool) {
	changes, line := domain.PaymentChanges(e)
	if changes == nil {
		changes = map[string]any{}
	}
	status := domain.StatusOf(e)
	entry := "[]"
	if line != nil {
		entry = "[" + JSONOf(line) + "]"
	}
	update := `UPDATE payments SET state = (SELECT jsonb_set(s || $1::jsonb, '{statusLogs}', (s->'statusLogs') || $2::jsonb)
				FROM (SELECT state::jsonb OFFSET 0) AS stored(s)),
			status = coalesce(nullif($3, ''), status), version = $4, updated_at = $5
		WHERE id = $6`
	args := []any{JSONOf(changes), entry, status, r.StreamVersion, r.RecordedAt, r.StreamID}
	if !delivery {
		b.Queue(update, args...)
		return
	}
	b.Queue(`WITH p AS (`+update+` RETURNING tenant_id, state)
		INSERT INTO webhook_deliveries (event_id, tenant_id, payment_id, stream_version, type, occurred_at, payment, next_attempt_at)
		SELECT $7, tenant_id, $6, $4, $8, $5, state, $5 FROM p WHERE coalesce(state->>'webhookUrl', '') <> ''`,
		append(args, r.ID, r.Type)...)
}

const paymentColumns = `state, version, updated_at`

func scanPayment(row pgx.Row) (domain.PaymentSnapshot, error) {
	var (
		p     domain.PaymentSnapshot
		state []byte
	)
	if err := row.Scan(&state, &p.Version, &p.UpdatedAt); err != nil {
		return p, err
	}
	if err := json.Unmarshal(state, &p.Payment); err != nil {
		return p, fmt.Errorf("decode payment state: %w", err)
	}
	p.UpdatedAt = p.UpdatedAt.UTC()
	return p, nil
}

// Payment reads a payment of tenantID, or NotFound (another tenant's too).
func (q *Reader) Payment(ctx context.Context, tenantID, id uuid.UUID) (domain.PaymentSnapshot, error) {
	p, err := scanPayment(q.pool.QueryRow(ctx, `SELECT `+paymentColumns+` FROM payments WHERE id = $1 AND tenant_id = $2`,
		id, tenantID))
	if errors.Is(err, pgx.ErrNoRows) {
		return p, domain.ErrNotFound
	}
	if err != nil {
		return p, fmt.Errorf("read payment: %w", err)
	}
	return p, nil
}

// PaymentStatus reads only a payment's status, or NotFound: a worker's
// check that its message's step is still to be taken, which most often it
// is not (the process that made the change took the next step at once),
// without reading the state out of TOAST and decoding it.
func (q *Reader) PaymentStatus(ctx context.Context, tenantID, id uuid.UUID) (string, error) {
	var status string
	err := q.pool.QueryRow(ctx, `SELECT status FROM payments WHERE id = $1 AND tenant_id = $2`, id, tenantID).Scan(&status)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", domain.ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("read payment status: %w", err)
	}
	return status, nil
}

// ListPayments returns a page of a tenant's payments matching f, newest
// first, after the position offset names, and the marker of the next page
// ("" on the last). A marker is only good for the filter that made it.
func (q *Reader) ListPayments(ctx context.Context, tenantID uuid.UUID, f domain.PaymentFilter, limit int, offset string) ([]domain.PaymentSnapshot, string, error) {
	filter := fmt.Sprintf("%s,%s,%s", nilOrID(f.UserID), f.Status, nilOrID(f.MerchantID))
	if !f.CreatedFrom.IsZero() || !f.CreatedBefore.IsZero() {
		filter += fmt.Sprintf(",%d,%d", f.CreatedFrom.UnixNano(), f.CreatedBefore.UnixNano())
	}
	after, err := decodeMarker(offset, "payments", tenantID, filter)
	if err != nil {
		return nil, "", err
	}
	rows, err := q.pool.Query(ctx, `SELECT `+paymentColumns+`, created_at, id FROM payments
		WHERE tenant_id = $1 AND ($2::uuid IS NULL OR user_id = $2) AND ($3 = '' OR status = $3)
			AND ($4::uuid IS NULL OR merchant_id = $4)
			AND ($5::timestamptz IS NULL OR (created_at, id) < ($5, $6))
			AND ($8::timestamptz IS NULL OR created_at >= $8) AND ($9::timestamptz IS NULL OR created_at < $9)
		ORDER BY created_at DESC, id DESC LIMIT $7`,
		tenantID, nullID(f.UserID), f.Status, nullID(f.MerchantID), after.at, after.id, limit+1,
		nullTime(f.CreatedFrom), nullTime(f.CreatedBefore))
	if err != nil {
		return nil, "", fmt.Errorf("list payments: %w", err)
	}
	type row struct {
		p domain.PaymentSnapshot
		k marker
	}
	items, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
		var (
			it    row
			state []byte
		)
		if err := r.Scan(&state, &it.p.Version, &it.p.UpdatedAt, &it.k.at, &it.k.id); err != nil {
			return it, err
		}
		it.p.UpdatedAt = it.p.UpdatedAt.UTC()
		return it, json.Unmarshal(state, &it.p.Payment)
	})
	if err != nil {
		return nil, "", fmt.Errorf("list payments: %w", err)
	}
	page := make([]domain.PaymentSnapshot, 0, min(len(items), limit))
	for _, it := range items[:min(len(items), limit)] {
		page = append(page, it.p)
	}
	if len(items) <= limit {
		return page, "", nil
	}
	last := items[limit-1].k
	return page, encodeMarker("payments", tenantID, filter, *last.at, last.id), nil
}

// ListPaymentDocuments returns a page of a payment's documents, newest
// first, after the position offset names, and the next page's marker.
func (q *Reader) ListPaymentDocuments(ctx context.Context, tenantID, paymentID uuid.UUID, limit int, offset string) ([]domain.PaymentDocumentItem, string, error) {
	after, err := decodeMarker(offset, "payment-documents", tenantID, paymentID.String())
	if err != nil {
		return nil, "", err
	}
	rows, err := q.pool.Query(ctx, `SELECT id, payment_id, file_name, content_type, size, sha256, created_at
		FROM payment_documents WHERE tenant_id = $1 AND payment_id = $2 AND ($3::timestamptz IS NULL OR (created_at, id) < ($3, $4))
		ORDER BY created_at DESC, id DESC LIMIT $5`, tenantID, paymentID, after.at, after.id, limit+1)
	if err != nil {
		return nil, "", fmt.Errorf("list payment documents: %w", err)
	}
	items, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (domain.PaymentDocumentItem, error) {
		var d domain.PaymentDocumentItem
		err := row.Scan(&d.ID, &d.PaymentID, &d.FileName, &d.ContentType, &d.Size, &d.SHA256, &d.CreatedAt)
		d.CreatedAt = d.CreatedAt.UTC()
		return d, err
	})
	if err != nil || len(items) <= limit {
		return items, "", err
	}
	last := items[limit-1]
	return items[:limit], encodeMarker("payment-documents", tenantID, paymentID.String(), last.CreatedAt, last.ID), nil
}

func nilOrID(id uuid.UUID) string {
	if id == uuid.Nil {
		return ""
	}
	return id.String()
}

// nullID is id as a query parameter, NULL when it is the zero UUID.
func nullID(id uuid.UUID) *uuid.UUID {
	if id == uuid.Nil {
		return nil
	}
	return &id
}

func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
