package projections

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ledger/ledger/domain"
)

// projectDashboardUser keeps dashboard_users and dashboard_sessions.
func projectDashboardUser(b *pgx.Batch, r domain.Record, e domain.Event) {
	switch e := e.(type) {
	case domain.DashboardUserCreated:
		b.Queue(`INSERT INTO dashboard_users (id, tenant_id, email, setup_token_hash, setup_expires_at, version, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $7)`, e.UserID, r.TenantID, e.Email, e.SetupTokenHash, e.SetupExpiresAt,
			r.StreamVersion, r.RecordedAt)
		return
	case domain.DashboardSetupLinkIssued:
		b.Queue(`UPDATE dashboard_users SET setup_token_hash = $2, setup_expires_at = $3 WHERE id = $1`,
			r.StreamID, e.SetupTokenHash, e.SetupExpiresAt)
	case domain.DashboardPasswordSet:
		b.Queue(`UPDATE dashboard_users SET password_hash = $2, setup_token_hash = NULL, setup_expires_at = NULL
			WHERE id = $1`, r.StreamID, e.PasswordHash)
		b.Queue(`UPDATE dashboard_sessions SET revoked_at = $2 WHERE user_id = $1 AND revoked_at IS NULL`,
			r.StreamID, r.RecordedAt)
	case domain.DashboardUserDisabled:
		b.Queue(`UPDATE dashboard_users SET password_hash = '', setup_token_hash = NULL, setup_expires_at = NULL
			WHERE id = $1`, r.StreamID)
		b.Queue(`UPDATE dashboard_sessions SET revoked_at = $2 WHERE user_id = $1 AND revoked_at IS NULL`,
			r.StreamID, r.RecordedAt)
	case domain.DashboardSignedIn:
		b.Queue(`INSERT INTO dashboard_sessions (session_hash, user_id, tenant_id, created_at, expires_at)
			VALUES ($1, $2, $3, $4, $5)`, e.SessionHash, r.StreamID, r.TenantID, r.RecordedAt, e.ExpiresAt)
	case domain.DashboardSignedOut:
		b.Queue(`UPDATE dashboard_sessions SET revoked_at = $3 WHERE session_hash = $1 AND user_id = $2 AND revoked_at IS NULL`,
			e.SessionHash, r.StreamID, r.RecordedAt)
	}
	b.Queue(`UPDATE dashboard_users SET version = $2, updated_at = $3 WHERE id = $1`, r.StreamID, r.StreamVersion, r.RecordedAt)
}

// DashboardAccountByEmail returns the dashboard user who signs in with
// email (normalised), or NotFound.
func (q *Reader) DashboardAccountByEmail(ctx context.Context, email string) (domain.DashboardAccount, error) {
	return q.dashboardAccount(ctx, `email = $1`, email)
}

// DashboardAccountBySetupToken returns the dashboard user whose unused
// set-password token has this hash, or NotFound.
func (q *Reader) DashboardAccountBySetupToken(ctx context.Context, tokenHash string) (domain.DashboardAccount, error) {
	return q.dashboardAccount(ctx, `setup_token_hash = $1`, tokenHash)
}

func (q *Reader) dashboardAccount(ctx context.Context, where string, arg any) (domain.DashboardAccount, error) {
	var a domain.DashboardAccount
	err := q.pool.QueryRow(ctx, `SELECT id, tenant_id, email, password_hash FROM dashboard_users WHERE `+where, arg).
		Scan(&a.ID, &a.TenantID, &a.Email, &a.PasswordHash)
	if errors.Is(err, pgx.ErrNoRows) {
		return a, domain.ErrNotFound
	}
	if err != nil {
		return a, fmt.Errorf("read dashboard user: %w", err)
	}
	return a, nil
}

// DashboardSession returns the session with this hash when it is open at
// now (not signed out, not expired), or NotFound.
func (q *Reader) DashboardSession(ctx context.Context, sessionHash string, now time.Time) (domain.DashboardSession, error) {
	var s domain.DashboardSession
	err := q.pool.QueryRow(ctx, `SELECT s.user_id, s.tenant_id, u.email, s.expires_at
		FROM dashboard_sessions s JOIN dashboard_users u ON u.id = s.user_id
		WHERE s.session_hash = $1 AND s.revoked_at IS NULL AND s.expires_at > $2`, sessionHash, now).
		Scan(&s.UserID, &s.TenantID, &s.Email, &s.ExpiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return s, domain.ErrNotFound
	}
	if err != nil {
		return s, fmt.Errorf("read dashboard session: %w", err)
	}
	s.ExpiresAt = s.ExpiresAt.UTC()
	return s, nil
}
