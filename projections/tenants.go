package projections

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ledger/ledger/domain"
)

// tenantStream projects a tenant's stream: its tenants row and its api_keys.
type tenantStream struct{ t domain.Tenant }

func (s *tenantStream) state() any { return s.t }

func (s *tenantStream) fold(e domain.Event) { s.t = domain.ApplyTenant(s.t, e) }

func (s *tenantStream) rows(w Rows, r *domain.Record, e domain.Event) {
	switch e := e.(type) {
	case domain.APIKeyCreated:
		w.Put(apiKeysTable, e.APIKey, r.TenantID, e.SecretHash, r.RecordedAt, nil)
	case domain.APIKeyRevoked:
		w.Update(apiKeysTable, []any{e.APIKey}, apiKeyRevocation, r.RecordedAt)
	}
}

var (
	apiKeyRevocation = []string{"revoked_at"}
	tenantChanges    = []string{"name", "owner_user_id", "version", "updated_at"}
)

func (s *tenantStream) put(w Rows, first, last *domain.Record) {
	w.Put(tenantsTable, s.t.ID, s.t.Name, s.t.OwnerUserID, last.StreamVersion, first.RecordedAt, last.RecordedAt)
}

func (s *tenantStream) update(w Rows, last *domain.Record) {
	w.Update(tenantsTable, []any{last.StreamID}, tenantChanges, s.t.Name, s.t.OwnerUserID, last.StreamVersion, last.RecordedAt)
}

// Credential returns the API key key, or a NotFound error.
func (q *Reader) Credential(ctx context.Context, key string) (domain.Credential, error) {
	k := domain.Credential{APIKey: key}
	err := q.pool.QueryRow(ctx, `SELECT tenant_id, secret_hash, revoked_at IS NOT NULL FROM api_keys WHERE api_key = $1`, key).
		Scan(&k.TenantID, &k.SecretHash, &k.Revoked)
	if errors.Is(err, pgx.ErrNoRows) {
		return k, domain.ErrNotFound
	}
	if err != nil {
		return k, fmt.Errorf("read api key: %w", err)
	}
	return k, nil
}

// PrincipalActive reports, in one query, whether a token's API key is still
// valid for tenantID and, for a user token (userID not Nil), whether that
// user is an active user of the tenant. Every authenticated request asks it,
// so revocations and disabled users take effect at once on every instance.
//
// A tenant token and a user token ask two different statements, rather than
// one with "$3 IS NULL OR ...": Postgres plans that one afresh on every call
// (a custom plan, which can drop the branch, always looked cheaper than the
// generic one), and planning a statement this small costs more than
// running it (docs/performance.md, "Payments").
func (q *Reader) PrincipalActive(ctx context.Context, tenantID uuid.UUID, apiKey string, userID uuid.UUID) (bool, error) {
	var ok bool
	var err error
	if userID == uuid.Nil {
		err = q.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM api_keys WHERE api_key = $1 AND tenant_id = $2 AND revoked_at IS NULL)`,
			apiKey, tenantID).Scan(&ok)
	} else {
		err = q.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM api_keys WHERE api_key = $1 AND tenant_id = $2 AND revoked_at IS NULL)
			AND EXISTS (SELECT 1 FROM users WHERE id = $3 AND tenant_id = $2 AND status = 'Active')`,
			apiKey, tenantID, userID).Scan(&ok)
	}
	if err != nil {
		return false, fmt.Errorf("check principal: %w", err)
	}
	return ok, nil
}

// OwnerUserID returns the owner user of a tenant.
// A tenant's owner never changes, so each process asks Postgres once.
func (q *Reader) OwnerUserID(ctx context.Context, tenantID uuid.UUID) (uuid.UUID, error) {
	if id, ok := q.owners.get(tenantID); ok {
		return id, nil
	}
	var id uuid.UUID
	err := q.pool.QueryRow(ctx, `SELECT owner_user_id FROM tenants WHERE id = $1`, tenantID).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return id, domain.ErrNotFound
	}
	if err == nil {
		q.owners.put(tenantID, id)
	}
	return id, err
}

// APIKeys lists a tenant's API keys, newest first.
func (q *Reader) APIKeys(ctx context.Context, tenantID uuid.UUID) ([]domain.APIKeyItem, error) {
	rows, err := q.pool.Query(ctx, `SELECT api_key, created_at, revoked_at FROM api_keys
		WHERE tenant_id = $1 ORDER BY created_at DESC, api_key`, tenantID)
	if err != nil {
		return nil, fmt.Errorf("list api keys: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (domain.APIKeyItem, error) {
		var k domain.APIKeyItem
		err := row.Scan(&k.APIKey, &k.CreatedAt, &k.RevokedAt)
		return k, err
	})
}
