package projections

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ledger/ledger/domain"
)

// TestDashboardSessions: a session opens at sign-in, closes at sign-out or
// expiry, and every open one closes when the password is set again or the
// user is disabled; the set-password token finds its user until it is used
// or the user is disabled.
func TestDashboardSessions(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	q := NewReader(f.pool)
	tenant := uuid.Must(uuid.NewV7())
	ref := domain.StreamRef{TenantID: tenant, Type: "dashboard_user", ID: uuid.Must(uuid.NewV7())}
	now := time.Now().UTC().Truncate(time.Millisecond)
	f.append(ref, domain.DashboardUserCreated{UserID: ref.ID, Email: "ops@acme.example", SetupTokenHash: "link1",
		SetupExpiresAt: now.Add(time.Hour)})
	if a, err := q.DashboardAccountBySetupToken(f.ctx, "link1"); err != nil || a.ID != ref.ID || a.TenantID != tenant {
		t.Fatalf("by setup token: got %+v, %v, want the user", a, err)
	}
	f.append(ref, domain.DashboardPasswordSet{PasswordHash: "argon1"},
		domain.DashboardSignedIn{SessionHash: "a", ExpiresAt: now.Add(time.Hour)},
		domain.DashboardSignedIn{SessionHash: "b", ExpiresAt: now.Add(time.Hour)},
		domain.DashboardSignedIn{SessionHash: "c", ExpiresAt: now.Add(-time.Second)},
		domain.DashboardSignedOut{SessionHash: "a"})
	if _, err := q.DashboardAccountBySetupToken(f.ctx, "link1"); domain.ErrorKind(err) != domain.NotFound {
		t.Errorf("used setup token: got %v, want NotFound", err)
	}
	if a, err := q.DashboardAccountByEmail(f.ctx, "ops@acme.example"); err != nil || a.PasswordHash != "argon1" {
		t.Errorf("by email: got %+v, %v, want the password hash", a, err)
	}
	open := func(hash string) bool {
		s, err := q.DashboardSession(f.ctx, hash, now)
		if err != nil && domain.ErrorKind(err) != domain.NotFound {
			t.Fatal(err)
		}
		return err == nil && s.UserID == ref.ID && s.TenantID == tenant && s.Email == "ops@acme.example"
	}
	if open("a") || !open("b") || open("c") {
		t.Errorf("sessions a (signed out), b (open), c (expired): got %v %v %v, want false true false", open("a"), open("b"), open("c"))
	}
	f.append(ref, domain.DashboardSetupLinkIssued{SetupTokenHash: "link2", SetupExpiresAt: now.Add(time.Hour)},
		domain.DashboardPasswordSet{PasswordHash: "argon2"})
	if open("b") {
		t.Errorf("session b after a new password: got open, want closed")
	}
	// Disabled: no password, no link, no open session.
	f.append(ref, domain.DashboardSignedIn{SessionHash: "d", ExpiresAt: now.Add(time.Hour)},
		domain.DashboardSetupLinkIssued{SetupTokenHash: "link3", SetupExpiresAt: now.Add(time.Hour)},
		domain.DashboardUserDisabled{})
	if open("d") {
		t.Errorf("session d after disable: got open, want closed")
	}
	if _, err := q.DashboardAccountBySetupToken(f.ctx, "link3"); domain.ErrorKind(err) != domain.NotFound {
		t.Errorf("a link issued before disable: got %v, want NotFound", err)
	}
	if a, err := q.DashboardAccountByEmail(f.ctx, "ops@acme.example"); err != nil || a.PasswordHash != "" {
		t.Errorf("by email after disable: got %+v, %v, want no password hash", a, err)
	}
}
