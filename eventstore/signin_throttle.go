package eventstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// SignInThrottle counts failed dashboard sign-ins per address, for the
// lock-out, in Postgres so every instance sees the same count.
type SignInThrottle struct{ pool *pgxpool.Pool }

// NewSignInThrottle returns the throttle over pool.
func NewSignInThrottle(pool *pgxpool.Pool) *SignInThrottle { return &SignInThrottle{pool: pool} }

// SignInFailures counts the failed sign-ins of email since since.
func (s *SignInThrottle) SignInFailures(ctx context.Context, email string, since time.Time) (int, error) {
	var n int
	err := s.pool.QueryRow(ctx, `SELECT count(*) FROM dashboard_sign_in_failures WHERE email = $1 AND failed_at > $2`,
		email, since).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count sign-in failures: %w", err)
	}
	return n, nil
}

// RecordSignInFailure notes a failed sign-in of email at at.
func (s *SignInThrottle) RecordSignInFailure(ctx context.Context, email string, at time.Time) error {
	if _, err := s.pool.Exec(ctx, `INSERT INTO dashboard_sign_in_failures (email, failed_at) VALUES ($1, $2)`, email, at); err != nil {
		return fmt.Errorf("record sign-in failure: %w", err)
	}
	return nil
}

// ClearSignInFailures forgets email's failed sign-ins (after a success).
func (s *SignInThrottle) ClearSignInFailures(ctx context.Context, email string) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM dashboard_sign_in_failures WHERE email = $1`, email); err != nil {
		return fmt.Errorf("clear sign-in failures: %w", err)
	}
	return nil
}
