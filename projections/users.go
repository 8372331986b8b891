package projections

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ledger/ledger/domain"
)

func projectUser(ctx context.Context, tx pgx.Tx, r domain.Record, e domain.Event) error {
	switch e := e.(type) {
	case domain.UserCreated:
		_, err := tx.Exec(ctx, `INSERT INTO users (id, tenant_id, email, name, role, status, version, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)`,
			e.UserID, r.TenantID, e.Email, e.Name, e.Role, domain.UserActive, r.StreamVersion, r.RecordedAt)
		return err
	}
	return nil
}

// UserStatus returns the status of a user of tenantID, or ErrNotFound.
func (q *Reader) UserStatus(ctx context.Context, tenantID, userID uuid.UUID) (string, error) {
	var status string
	err := q.pool.QueryRow(ctx, `SELECT status FROM users WHERE id = $1 AND tenant_id = $2`, userID, tenantID).Scan(&status)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", errNotFound
	}
	if err != nil {
		return "", fmt.Errorf("read user: %w", err)
	}
	return status, nil
}
