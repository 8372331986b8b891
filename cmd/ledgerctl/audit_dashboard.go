package main

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ledger/ledger/domain"
)

// auditDashboardUserFold is a dashboard_user stream: dashboard_users and
// dashboard_sessions (projections/dashboard.go). A session row is the
// sign-in's session hash, ended (revoked_at) by its sign-out or by the
// user's next password.
type auditDashboardUserFold struct {
	u        domain.DashboardUser
	sessions []*auditSessionFacts // in sign-in order; a hash signed in twice keeps its first row
}

type auditSessionFacts struct {
	hash             string
	created, expires time.Time
	revoked          *time.Time
}

func (f *auditDashboardUserFold) apply(r domain.Record, e domain.Event) {
	f.u = domain.ApplyDashboardUser(f.u, e)
	at := r.RecordedAt
	switch e := e.(type) {
	case domain.DashboardPasswordSet, domain.DashboardUserDisabled: // every open session ends
		for _, k := range f.sessions {
			if k.revoked == nil {
				k.revoked = &at
			}
		}
	case domain.DashboardSignedIn:
		if f.session(e.SessionHash) == nil {
			f.sessions = append(f.sessions, &auditSessionFacts{hash: e.SessionHash, created: at, expires: auditMicros(e.ExpiresAt)})
		}
	case domain.DashboardSignedOut:
		if k := f.session(e.SessionHash); k != nil && k.revoked == nil {
			k.revoked = &at
		}
	}
}

func (f *auditDashboardUserFold) session(hash string) *auditSessionFacts {
	for _, k := range f.sessions {
		if k.hash == hash {
			return k
		}
	}
	return nil
}

func (f *auditDashboardUserFold) check(ctx context.Context, rc *auditReplayCheck, s *auditStream) error {
	rows, err := rc.models.dashUsers.take(ctx, s.ref.ID)
	if err != nil {
		return err
	}
	sessions, err := rc.models.dashSessions.take(ctx, s.ref.ID)
	if err != nil {
		return err
	}
	u := f.u
	if row, c, ok := auditRowOf(rc, s, "dashboard_users", rows); ok {
		if u.ID != s.ref.ID {
			c.eq("id (dashboard_user.created's userId)", s.ref.ID, u.ID)
		}
		c.eq("tenant_id", s.ref.TenantID, row.tenant)
		c.eq("email", u.Email, row.email)
		c.eq("password_hash", u.PasswordHash, row.passwordHash)
		// A used link leaves both columns NULL (dashboard_user.password_set).
		var setupHash *string
		var setupExpires *time.Time
		if u.SetupTokenHash != "" {
			expires := auditMicros(u.SetupExpiresAt)
			setupHash, setupExpires = &u.SetupTokenHash, &expires
		}
		c.eq("setup_token_hash", setupHash, row.setupHash)
		c.eq("setup_expires_at", setupExpires, row.setupExpires)
		auditStreamColumns(c, s, row.version, row.created, row.updated)
	}
	byHash := map[string]auditSessionRow{}
	for _, k := range sessions {
		byHash[k.hash] = k
	}
	for _, k := range f.sessions {
		c := auditFields{f: &rc.replay, subject: "dashboard_sessions of " + s.subject}
		row, ok := byHash[k.hash]
		if !ok {
			c.note("missing: a session signed in at %s", k.created.UTC().Format(time.RFC3339Nano))
			continue
		}
		delete(byHash, k.hash)
		rc.rows++
		c.eq("tenant_id", s.ref.TenantID, row.tenant)
		c.eq("created_at", k.created, row.created)
		c.eq("expires_at", k.expires, row.expires)
		c.eq("revoked_at", k.revoked, row.revoked)
	}
	for _, k := range sessions {
		if _, left := byHash[k.hash]; left {
			rc.models.dashSessions.extra(k)
		}
	}
	return nil
}

type auditDashboardUserRow struct {
	id, tenant          uuid.UUID
	email, passwordHash string
	setupHash           *string
	setupExpires        *time.Time
	version             int
	created, updated    time.Time
}

func (r auditDashboardUserRow) streamID() uuid.UUID { return r.id }
func (r auditDashboardUserRow) rowID() string       { return r.id.String() }
func scanAuditDashboardUserRow(row pgx.CollectableRow) (r auditDashboardUserRow, err error) {
	err = row.Scan(&r.id, &r.tenant, &r.email, &r.passwordHash, &r.setupHash, &r.setupExpires, &r.version, &r.created, &r.updated)
	return r, err
}

// auditSessionRow is a dashboard_sessions row; its label is the user's id
// and a prefix of the hash, which is a credential's digest and is not shown
// whole.
type auditSessionRow struct {
	hash             string
	user, tenant     uuid.UUID
	created, expires time.Time
	revoked          *time.Time
}

func (r auditSessionRow) streamID() uuid.UUID { return r.user }
func (r auditSessionRow) rowID() string       { return r.user.String() + "/" + r.hash[:min(8, len(r.hash))] }
func scanAuditSessionRow(row pgx.CollectableRow) (r auditSessionRow, err error) {
	err = row.Scan(&r.hash, &r.user, &r.tenant, &r.created, &r.expires, &r.revoked)
	return r, err
}

// auditMicros is t as a timestamptz column holds it when pgx wrote it: an
// event's own times keep nanoseconds, and pgx drops what is below the
// microsecond.
func auditMicros(t time.Time) time.Time { return t.Truncate(time.Microsecond) }
