package projections

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ledger/ledger/domain"
)

// dashboardUserStream projects a dashboard user's stream: its
// dashboard_users row and its dashboard_sessions.
type dashboardUserStream struct {
	u      domain.DashboardUser
	closed []string // the sessions the last event folded signed out or revoked
}

func (s *dashboardUserStream) state() any { return s.u }

func (s *dashboardUserStream) fold(e domain.Event) {
	open := s.u.OpenSessions
	s.u = domain.ApplyDashboardUser(s.u, e)
	s.closed = slices.DeleteFunc(slices.Clone(open), func(h string) bool { return slices.Contains(s.u.OpenSessions, h) })
}

func (s *dashboardUserStream) rows(w Rows, r *domain.Record, e domain.Event) {
	if e, ok := e.(domain.DashboardSignedIn); ok {
		w.Put(dashboardSessionsTable, e.SessionHash, r.StreamID, r.TenantID, r.RecordedAt, e.ExpiresAt, nil)
	}
	for _, h := range s.closed {
		w.Update(dashboardSessionsTable, []any{h}, sessionRevocation, r.RecordedAt)
	}
}

var (
	sessionRevocation    = []string{"revoked_at"}
	dashboardUserChanges = []string{"email", "password_hash", "setup_token_hash", "setup_expires_at", "version", "updated_at"}
)

// setupLink is the set-password link's token hash and expiry, NULL once used.
func (s *dashboardUserStream) setupLink() (*string, *time.Time) {
	if s.u.SetupTokenHash == "" {
		return nil, nil
	}
	return &s.u.SetupTokenHash, &s.u.SetupExpiresAt
}

func (s *dashboardUserStream) put(w Rows, first, last *domain.Record) {
	token, expires := s.setupLink()
	w.Put(dashboardUsersTable, s.u.ID, first.TenantID, s.u.Email, s.u.PasswordHash, token, expires, last.StreamVersion,
		first.RecordedAt, last.RecordedAt)
}

func (s *dashboardUserStream) update(w Rows, last *domain.Record) {
	token, expires := s.setupLink()
	w.Update(dashboardUsersTable, []any{last.StreamID}, dashboardUserChanges, s.u.Email, s.u.PasswordHash, token, expires,
		last.StreamVersion, last.RecordedAt)
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
