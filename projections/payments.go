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

// paymentStream projects a payment's stream: the payments row holds the
// payment's state as JSON (the Payment's own encoding, which the reads
// decode), and each status event of a payment with a webhookUrl adds its
// webhook delivery with the payment as that event left it.
type paymentStream struct {
	p       domain.Payment
	encoded []byte // p's JSON while p is unchanged since it was encoded
}

func (s *paymentStream) state() any { return s.p }

// json is the payment's state as the payments row and a delivery hold it.
func (s *paymentStream) json() []byte {
	if s.encoded == nil {
		s.encoded, _ = json.Marshal(s.p) // a Payment always encodes
	}
	return s.encoded
}

func (s *paymentStream) fold(e domain.Event) { s.p, s.encoded = domain.ApplyPayment(s.p, e), nil }

func (s *paymentStream) rows(w Rows, r *domain.Record, e domain.Event) {
	switch e := e.(type) {
	case domain.PaymentCreated:
		w.Put(paymentDeadlinesTable, r.StreamID, r.TenantID, e.ExpiresAt)
		s.queueDelivery(w, r)
		if ref := depositReference(e.Payment); ref != "" {
			w.Put(depositReferencesTable, r.StreamID, r.TenantID, ref)
		}
	case domain.PaymentDocumentAttached:
		w.Put(paymentDocumentsTable, e.DocumentID, r.TenantID, r.StreamID, e.FileName, e.ContentType, e.Size, e.SHA256, e.At)
	case domain.PaymentDepositReceived:
		putBankCredit(w, r, e.Source)
	default:
		if d, ok := e.(domain.PaymentDeposited); ok {
			putBankCredit(w, r, d.Source)
		}
		if domain.StatusOf(e) == "" {
			return
		}
		s.queueDelivery(w, r)
		if s.p.Status != domain.StatusTransferring && s.p.Status != domain.StatusSuccess { // those two never follow created
			w.Delete(paymentDeadlinesTable, r.StreamID)
		}
	}
}

// depositReference is the reference a bank-transfer payment's payer must
// quote, or "".
func depositReference(p domain.Payment) string {
	if p.Funding != domain.FundingBankTransfer {
		return ""
	}
	var d domain.BankDeposit
	if json.Unmarshal(p.DepositDetails, &d) != nil {
		return ""
	}
	return d.Reference
}

// putBankCredit records the bank entry a deposit came from, once: the
// table's unique key fails the append that would record it again.
func putBankCredit(w Rows, r *domain.Record, src *domain.DepositSource) {
	if src != nil && src.Entry != nil {
		w.Put(bankCreditsTable, r.ID, r.TenantID, src.Entry.Account, src.Entry.EntryRef, r.RecordedAt)
	}
}

// queueDelivery adds the webhook delivery of the status event r, when the
// payment has a webhookUrl. Its first attempt falls due to the dispatchers
// after the handoff (domain.WebhookHandoff); the process that wrote it
// claims it at once (claimPaymentDue).
func (s *paymentStream) queueDelivery(w Rows, r *domain.Record) {
	if s.p.WebhookURL != "" && w.Keeps(webhookDeliveriesTable) {
		w.Put(webhookDeliveriesTable, r.ID, r.TenantID, r.StreamID, r.StreamVersion, r.Type, r.RecordedAt, s.json(), r.RecordedAt.Add(domain.WebhookHandoff))
	}
}

var paymentChanges = []string{"status", "state", "version", "updated_at"}

func (s *paymentStream) put(w Rows, first, last *domain.Record) {
	w.Put(paymentsTable, s.p.ID, first.TenantID, s.p.UserID, s.p.MerchantID, s.p.Status, s.json(), last.StreamVersion,
		first.RecordedAt, last.RecordedAt)
}

func (s *paymentStream) update(w Rows, last *domain.Record) {
	w.Update(paymentsTable, []any{last.StreamID}, paymentChanges, s.p.Status, s.json(), last.StreamVersion, last.RecordedAt)
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
	var err error
	if p.Payment, err = domain.DecodePayment(state); err != nil {
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
		var decodeErr error
		it.p.Payment, decodeErr = domain.DecodePayment(state)
		return it, decodeErr
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
