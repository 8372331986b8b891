package projections

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ledger/ledger/domain"
)

// merchantStream projects a merchant's stream onto its merchants row.
type merchantStream struct{ m domain.Merchant }

func (s *merchantStream) state() any { return s.m }

func (s *merchantStream) fold(e domain.Event) { s.m = domain.ApplyMerchant(s.m, e) }

func (s *merchantStream) rows(Rows, *domain.Record, domain.Event) {}

var merchantChanges = []string{"name", "country", "currency", "payout_method", "bank_name", "account_number",
	"phone_number", "lnurl", "version", "updated_at"}

func (s *merchantStream) put(w Rows, first, last *domain.Record) {
	m := s.m
	w.Put(merchantsTable, m.ID, first.TenantID, m.Name, m.Country, m.Currency, m.PayoutMethod, m.BankName,
		m.AccountNumber, m.PhoneNumber, m.LNURL, last.StreamVersion, first.RecordedAt, last.RecordedAt)
}

func (s *merchantStream) update(w Rows, last *domain.Record) {
	m := s.m
	w.Update(merchantsTable, []any{last.StreamID}, merchantChanges, m.Name, m.Country, m.Currency, m.PayoutMethod,
		m.BankName, m.AccountNumber, m.PhoneNumber, m.LNURL, last.StreamVersion, last.RecordedAt)
}

const merchantColumns = `id, name, country, currency, payout_method, bank_name, account_number, phone_number, lnurl,
	version, created_at, updated_at`

func scanMerchant(row pgx.Row) (domain.MerchantSnapshot, error) {
	var m domain.MerchantSnapshot
	err := row.Scan(&m.ID, &m.Name, &m.Country, &m.Currency, &m.PayoutMethod, &m.BankName, &m.AccountNumber,
		&m.PhoneNumber, &m.LNURL, &m.Version, &m.CreatedAt, &m.UpdatedAt)
	m.CreatedAt, m.UpdatedAt = m.CreatedAt.UTC(), m.UpdatedAt.UTC()
	return m, err
}

// Merchant reads a merchant of tenantID, or NotFound (another tenant's too).
// A merchant never changes after merchant.created (no event updates or
// removes one), so each process reads it from Postgres once: every payment
// names one. A merchant event that changes one must end this caching.
func (q *Reader) Merchant(ctx context.Context, tenantID, id uuid.UUID) (domain.MerchantSnapshot, error) {
	if m, ok := q.merchants.get(id); ok {
		if m.TenantID != tenantID {
			return domain.MerchantSnapshot{}, domain.ErrNotFound
		}
		return m, nil
	}
	m, err := scanMerchant(q.pool.QueryRow(ctx, `SELECT `+merchantColumns+` FROM merchants WHERE id = $1 AND tenant_id = $2`,
		id, tenantID))
	if errors.Is(err, pgx.ErrNoRows) {
		return m, domain.ErrNotFound
	}
	if err != nil {
		return m, fmt.Errorf("read merchant: %w", err)
	}
	m.TenantID = tenantID
	q.merchants.put(id, m)
	return m, nil
}

// ListMerchants returns a page of a tenant's merchants, newest first, after
// the position offset names (empty: the first page), and the marker of the
// next page ("" on the last).
func (q *Reader) ListMerchants(ctx context.Context, tenantID uuid.UUID, limit int, offset string) ([]domain.MerchantSnapshot, string, error) {
	after, err := decodeMarker(offset, "merchants", tenantID, "")
	if err != nil {
		return nil, "", err
	}
	rows, err := q.pool.Query(ctx, `SELECT `+merchantColumns+` FROM merchants
		WHERE tenant_id = $1 AND ($2::timestamptz IS NULL OR (created_at, id) < ($2, $3))
		ORDER BY created_at DESC, id DESC LIMIT $4`, tenantID, after.at, after.id, limit+1)
	if err != nil {
		return nil, "", fmt.Errorf("list merchants: %w", err)
	}
	items, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (domain.MerchantSnapshot, error) {
		return scanMerchant(row)
	})
	if err != nil {
		return nil, "", fmt.Errorf("list merchants: %w", err)
	}
	if len(items) <= limit {
		return items, "", nil
	}
	last := items[limit-1]
	return items[:limit], encodeMarker("merchants", tenantID, "", last.CreatedAt, last.ID), nil
}
