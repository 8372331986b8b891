// Package signin keeps the dashboard's sign-in throttle: the failed
// sign-ins the lock-out counts, in Postgres beside the event store.
package signin

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledger/ledger/domain"
)

// Throttle counts failed dashboard sign-ins per address and client, for
// the lock-out (domain.SignInLockout), in Postgres so every instance sees
// the same counts.
type Throttle struct{ pool *pgxpool.Pool }

// NewThrottle returns the throttle over pool.
func NewThrottle(pool *pgxpool.Pool) *Throttle { return &Throttle{pool: pool} }

// ReserveSignInAttempt admits a sign-in attempt at email from client
// unless lockout refuses it given the failures after lockout.Since, and if
// it admits it, records it as a failure at at, before the password is
// checked: a success clears it (ClearSignInFailures). Counting and
// recording are one step under locks on the client and the address, so
// attempts sent in parallel are admitted one by one and no more than the
// limits pass in a window; counting before the password check and
// recording after it let 40 parallel guesses through a limit of 5.
// Failures the window has passed are deleted on the way.
func (s *Throttle) ReserveSignInAttempt(ctx context.Context, email, client string, at time.Time, lockout domain.SignInLockout) (bool, error) {
	admitted := false
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// One purge at a time: others skip it rather than wait, or
		// deadlock deleting the same rows in another order.
		if _, err := tx.Exec(ctx, `WITH purge AS (SELECT pg_try_advisory_xact_lock(hashtextextended('dashboard sign-in purge', 0)) AS mine)
			DELETE FROM dashboard_sign_in_failures USING purge WHERE purge.mine AND failed_at <= $1`, lockout.Since); err != nil {
			return fmt.Errorf("purge: %w", err)
		}
		// The client first, then the address, always in that order.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('dashboard sign-in client ' || $1, 0)),
			pg_advisory_xact_lock(hashtextextended('dashboard sign-in ' || $2, 0))`, client, email); err != nil {
			return err
		}
		var f domain.SignInFailures
		if err := tx.QueryRow(ctx, `SELECT
			(SELECT count(*) FROM dashboard_sign_in_failures WHERE email = $1 AND failed_at > $2 AND client = $3),
			(SELECT count(*) FROM dashboard_sign_in_failures WHERE email = $1 AND failed_at > $2),
			(SELECT count(*) FROM dashboard_sign_in_failures WHERE client = $3 AND failed_at > $2)`,
			email, lockout.Since, client).Scan(&f.FromClient, &f.FromAnywhere, &f.FromClientAllAddresses); err != nil {
			return err
		}
		if !lockout.Admits(f) {
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
func (s *Throttle) ClearSignInFailures(ctx context.Context, email, client string) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM dashboard_sign_in_failures WHERE email = $1 AND client = $2`, email, client); err != nil {
		return fmt.Errorf("clear sign-in failures: %w", err)
	}
	return nil
}
