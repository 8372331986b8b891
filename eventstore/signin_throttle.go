package eventstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledger/ledger/domain"
)

// SignInThrottle counts failed dashboard sign-ins per address and client,
// for the lock-out (domain.SignInLockout), in Postgres so every instance
// sees the same counts.
type SignInThrottle struct{ pool *pgxpool.Pool }

// NewSignInThrottle returns the throttle over pool.
func NewSignInThrottle(pool *pgxpool.Pool) *SignInThrottle { return &SignInThrottle{pool: pool} }

// ReserveSignInAttempt admits a sign-in attempt at email from client
// unless lockout refuses it given the failures after lockout.Since, and if
// it admits it, records it as a failure at at, before the password is
// checked: a success clears it (ClearSignInFailures). Counting and
// recording are one step under a lock on the address, so attempts sent in
// parallel are admitted one by one and no more than the limits pass in a
// window; counting before the password check and recording after it let 40
// parallel guesses through a limit of 5.
func (s *SignInThrottle) ReserveSignInAttempt(ctx context.Context, email, client string, at time.Time, lockout domain.SignInLockout) (bool, error) {
	admitted := false
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('dashboard sign-in ' || $1, 0))`, email); err != nil {
			return err
		}
		var fromClient, fromAnywhere int
		if err := tx.QueryRow(ctx, `SELECT count(*) FILTER (WHERE client = $3), count(*)
			FROM dashboard_sign_in_failures WHERE email = $1 AND failed_at > $2`,
			email, lockout.Since, client).Scan(&fromClient, &fromAnywhere); err != nil {
			return err
		}
		if !lockout.Admits(fromClient, fromAnywhere) {
			return nil
		}
		admitted = true
		_, err := tx.Exec(ctx, `INSERT INTO dashboard_sign_in_failures (email, client, failed_at) VALUES ($1, $2, $3)`, email, client, at)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("reserve sign-in attempt: %w", err)
	}
	return admitted, nil
}

// ClearSignInFailures forgets email's failed sign-ins from client (after
// its success there). Those from other clients stay until the window has
// passed them: the address's owner signing in must not hand a guesser
// spread over many clients a fresh ceiling.
func (s *SignInThrottle) ClearSignInFailures(ctx context.Context, email, client string) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM dashboard_sign_in_failures WHERE email = $1 AND client = $2`, email, client); err != nil {
		return fmt.Errorf("clear sign-in failures: %w", err)
	}
	return nil
}
