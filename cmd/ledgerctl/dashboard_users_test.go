package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore"
	"github.com/ledger/ledger/projections"
)

// TestDashboardUserAdd: the command prints a one-time link whose token is
// stored only as its hash, with the operator as the event's actor; an
// address already in use and an unknown tenant are refused.
func TestDashboardUserAdd(t *testing.T) {
	t.Parallel()
	e := newRebuildEnv(t)
	tn := acmeTenant(t, e)
	var u dashboardUser
	out := e.run("dashboard-user", "add", "--tenant", tn.TenantID, "--email", " Ops@Acme.Test ", "--public-url", "https://ledger.example/")
	if err := json.Unmarshal([]byte(out), &u); err != nil {
		t.Fatal(err)
	}
	link, err := url.Parse(u.SetPasswordURL)
	if err != nil || u.Email != "ops@acme.test" || link.Scheme+"://"+link.Host+link.Path != "https://ledger.example/dashboard/set-password" {
		t.Fatalf("got %+v, want the normalised email and a set-password link on the public URL", u)
	}
	token := link.Query().Get("token")
	sum := sha256.Sum256([]byte(token))
	var stored, actor, data string
	if err := e.pool.QueryRow(e.ctx, `SELECT u.setup_token_hash, ev.metadata->>'actor', ev.data::text
		FROM dashboard_users u JOIN events ev ON ev.stream_id = u.id WHERE u.id = $1`, u.DashboardUserID).Scan(&stored, &actor, &data); err != nil {
		t.Fatal(err)
	}
	if len(token) < 43 || stored != hex.EncodeToString(sum[:]) || strings.Contains(data, token) {
		t.Errorf("token %q: got stored %q, want only its SHA-256 kept", token, stored)
	}
	if actor != operator.Actor {
		t.Errorf("actor: got %q, want %q", actor, operator.Actor)
	}
	if _, err := e.try("dashboard-user", "add", "--tenant", tn.TenantID, "--email", "ops@acme.test"); err == nil ||
		!strings.Contains(err.Error(), "already has a dashboard account") {
		t.Errorf("the same address again: got %v, want refused", err)
	}
	if _, err := e.try("dashboard-user", "add", "--tenant", "01a211e0-0000-7000-8000-000000000000", "--email", "x@acme.test"); err == nil {
		t.Errorf("an unknown tenant: got no error, want one")
	}

	var reset dashboardUser
	if err := json.Unmarshal([]byte(e.run("dashboard-user", "reset", "--email", "OPS@acme.test")), &reset); err != nil {
		t.Fatal(err)
	}
	if reset.DashboardUserID != u.DashboardUserID || reset.SetPasswordURL == u.SetPasswordURL {
		t.Errorf("reset: got %+v, want a new link for the same user", reset)
	}
	if _, err := e.try("dashboard-user", "reset", "--email", "nobody@acme.test"); err == nil {
		t.Errorf("reset of an unknown address: got no error, want one")
	}
}

// TestDashboardUserDisable: disable ends the user's password, link and
// sessions with an operator's event; reset lets them in again; an unknown
// address is refused.
func TestDashboardUserDisable(t *testing.T) {
	t.Parallel()
	e := newRebuildEnv(t)
	tn := acmeTenant(t, e)
	var u dashboardUser
	if err := json.Unmarshal([]byte(e.run("dashboard-user", "add", "--tenant", tn.TenantID, "--email", "ops@acme.test")), &u); err != nil {
		t.Fatal(err)
	}
	// A password and an open session: the link was used and the user signed in.
	store := eventstore.New(e.pool, projections.Projector{}, nil)
	ref := domain.StreamRef{TenantID: uuid.MustParse(tn.TenantID), Type: "dashboard_user", ID: uuid.MustParse(u.DashboardUserID)}
	if _, err := eventstore.Execute(e.ctx, store, ref, domain.Metadata{Actor: "test"}, domain.ApplyDashboardUser,
		func(domain.DashboardUser) ([]domain.Event, error) {
			return []domain.Event{domain.DashboardPasswordSet{PasswordHash: "argon"},
				domain.DashboardSignedIn{SessionHash: "open", ExpiresAt: time.Now().Add(time.Hour)}}, nil
		}); err != nil {
		t.Fatal(err)
	}
	e.run("dashboard-user", "disable", "--email", "OPS@acme.test")
	e.run("dashboard-user", "disable", "--email", "ops@acme.test") // repeated: nothing more to take away
	var password, actor string
	var link *string
	var openSessions, disabled int
	if err := e.pool.QueryRow(e.ctx, `SELECT u.password_hash, u.setup_token_hash,
			(SELECT count(*) FROM dashboard_sessions WHERE user_id = u.id AND revoked_at IS NULL),
			(SELECT count(*) FROM events WHERE stream_id = u.id AND type = 'dashboard_user.disabled'),
			(SELECT min(metadata->>'actor') FROM events WHERE stream_id = u.id AND type = 'dashboard_user.disabled')
		FROM dashboard_users u WHERE u.id = $1`, u.DashboardUserID).Scan(&password, &link, &openSessions, &disabled, &actor); err != nil {
		t.Fatal(err)
	}
	if password != "" || link != nil || openSessions != 0 || disabled != 1 || actor != operator.Actor {
		t.Errorf("after disable twice: password %q, link %v, %d open sessions, %d disabled events, actor %q; want none, one event and the operator",
			password, link, openSessions, disabled, actor)
	}
	var again dashboardUser
	if err := json.Unmarshal([]byte(e.run("dashboard-user", "reset", "--email", "ops@acme.test")), &again); err != nil ||
		again.DashboardUserID != u.DashboardUserID {
		t.Errorf("reset after disable: got %+v, %v, want a new link for the user", again, err)
	}
	if _, err := e.try("dashboard-user", "disable", "--email", "nobody@acme.test"); err == nil {
		t.Errorf("disable of an unknown address: got no error, want one")
	}
}

// acmeTenant creates the tenant the dashboard users are added to.
func acmeTenant(t *testing.T, e rebuildEnv) keyPair {
	t.Helper()
	var tn keyPair
	if err := json.Unmarshal([]byte(e.run("tenant", "create", "--name", "Acme", "--email", "owner@acme.test")), &tn); err != nil {
		t.Fatal(err)
	}
	return tn
}
