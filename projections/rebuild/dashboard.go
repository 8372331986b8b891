package rebuild

import (
	"time"

	"github.com/google/uuid"

	"github.com/ledger/ledger/domain"
)

// The fold of dashboard_user streams: dashboard.go's statements, on rows
// in memory (see rebuild.go's fold).

type (
	dashboardUserRow struct {
		id, tenant       uuid.UUID
		email, password  string
		setupHash        *string
		setupExpires     *time.Time
		version          int
		created, updated time.Time
	}
	dashboardSessionRow struct {
		hash             string
		user, tenant     uuid.UUID
		created, expires time.Time
		revoked          *time.Time
	}
)

// applyDashboardUser mirrors projectDashboardUser.
func (s *streamFold) applyDashboardUser(r *domain.Record, e domain.Event) error {
	if c, ok := e.(domain.DashboardUserCreated); ok {
		if c.UserID != r.StreamID || s.dashUser != nil {
			return errUnfoldable
		}
		hash, expires := c.SetupTokenHash, c.SetupExpiresAt
		s.dashUser = &dashboardUserRow{id: c.UserID, tenant: r.TenantID, email: c.Email, setupHash: &hash,
			setupExpires: &expires, version: r.StreamVersion, created: r.RecordedAt, updated: r.RecordedAt}
		return nil
	}
	u := s.dashUser
	if u == nil {
		return errUnfoldable // the projector's statements would act on no row, or on another stream's
	}
	switch e := e.(type) {
	case domain.DashboardSetupLinkIssued:
		hash, expires := e.SetupTokenHash, e.SetupExpiresAt
		u.setupHash, u.setupExpires = &hash, &expires
	case domain.DashboardPasswordSet:
		u.password, u.setupHash, u.setupExpires = e.PasswordHash, nil, nil
		s.revokeDashboardSessions(r.RecordedAt)
	case domain.DashboardUserDisabled:
		u.password, u.setupHash, u.setupExpires = "", nil, nil
		s.revokeDashboardSessions(r.RecordedAt)
	case domain.DashboardSignedIn:
		for _, k := range s.dashSessions {
			if k.hash == e.SessionHash {
				return errUnfoldable // the insert would fail; let it, in the projector
			}
		}
		s.dashSessions = append(s.dashSessions, &dashboardSessionRow{hash: e.SessionHash, user: r.StreamID,
			tenant: r.TenantID, created: r.RecordedAt, expires: e.ExpiresAt})
	case domain.DashboardSignedOut:
		for _, k := range s.dashSessions {
			if k.hash == e.SessionHash && k.revoked == nil {
				at := r.RecordedAt
				k.revoked = &at
			}
		}
	}
	u.version, u.updated = r.StreamVersion, r.RecordedAt
	return nil
}

// revokeDashboardSessions ends every open session of the stream's user at at.
func (s *streamFold) revokeDashboardSessions(at time.Time) {
	for _, k := range s.dashSessions {
		if k.revoked == nil {
			k.revoked = &at
		}
	}
}

// emitDashboardUser hands the stream's rows to emit.
func (s *streamFold) emitDashboardUser(emit func(table string, row ...any)) {
	if u := s.dashUser; u != nil {
		emit("dashboard_users", u.id, u.tenant, u.email, u.password, u.setupHash, u.setupExpires, u.version, u.created, u.updated)
	}
	for _, k := range s.dashSessions {
		emit("dashboard_sessions", k.hash, k.user, k.tenant, k.created, k.expires, k.revoked)
	}
}
