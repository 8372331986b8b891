package projections

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ledger/ledger/domain"
)

// UserStatus returns the status of a user of tenantID, or ErrNotFound.
func (q *Reader) UserStatus(ctx context.Context, tenantID, userID uuid.UUID) (string, error) {
	var status string
	err := q.pool.QueryRow(ctx, `SELECT status FROM users WHERE id = $1 AND tenant_id = $2`, userID, tenantID).Scan(&status)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", domain.ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("read user: %w", err)
	}
	return status, nil
}
