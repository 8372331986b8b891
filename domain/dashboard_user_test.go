package domain

import (
	"testing"
	"time"

	"github.com/google/uuid"
)

func TestDecideSetDashboardPassword(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	created := ApplyDashboardUser(DashboardUser{}, DashboardUserCreated{UserID: uuid.New(), Email: "ops@acme.example",
		SetupTokenHash: "good", SetupExpiresAt: now.Add(time.Hour)})
	used := ApplyDashboardUser(created, DashboardPasswordSet{PasswordHash: "argon"})
	tests := []struct {
		name      string
		state     DashboardUser
		tokenHash string
		now       time.Time
		wantErr   bool
	}{
		{name: "valid link", state: created, tokenHash: "good", now: now},
		{name: "wrong token", state: created, tokenHash: "bad", now: now, wantErr: true},
		{name: "expired link", state: created, tokenHash: "good", now: now.Add(time.Hour), wantErr: true},
		{name: "link already used", state: used, tokenHash: "good", now: now, wantErr: true},
		{name: "no such user", state: DashboardUser{}, tokenHash: "", now: now, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			events, err := DecideSetDashboardPassword(tt.state, tt.tokenHash, "argon", tt.now)
			if tt.wantErr {
				if e, ok := err.(*Error); !ok || e.Code != "setup_link_invalid" {
					t.Fatalf("got %v, want setup_link_invalid", err)
				}
				return
			}
			if err != nil || len(events) != 1 || events[0].(DashboardPasswordSet).PasswordHash != "argon" {
				t.Fatalf("got %v, %v, want one password_set event", events, err)
			}
		})
	}
}

func TestDecideIssueDashboardSetupLink(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	if _, err := DecideIssueDashboardSetupLink(DashboardUser{}, "new", now); ErrorKind(err) != NotFound {
		t.Fatalf("no such user: got %v, want NotFound", err)
	}
	u := ApplyDashboardUser(DashboardUser{}, DashboardUserCreated{UserID: uuid.New(), Email: "a@b.example",
		SetupTokenHash: "old", SetupExpiresAt: now.Add(time.Hour)})
	u = ApplyDashboardUser(u, DashboardPasswordSet{PasswordHash: "argon"})
	events, err := DecideIssueDashboardSetupLink(u, "new", now.Add(72*time.Hour))
	if err != nil || len(events) != 1 {
		t.Fatalf("got %v, %v, want one setup_link_issued event", events, err)
	}
	u = ApplyDashboardUser(u, events[0])
	if _, err := DecideSetDashboardPassword(u, "old", "argon2", now); err == nil {
		t.Errorf("the old link: got accepted, want refused")
	}
	if _, err := DecideSetDashboardPassword(u, "new", "argon2", now); err != nil {
		t.Errorf("the new link: got %v, want accepted", err)
	}
}

func TestDecideDashboardSignInNeedsPassword(t *testing.T) {
	t.Parallel()
	u := ApplyDashboardUser(DashboardUser{}, DashboardUserCreated{UserID: uuid.New(), Email: "a@b.example"})
	if _, err := DecideDashboardSignIn(u, "s", time.Now()); ErrorKind(err) != Unauthenticated {
		t.Fatalf("before a password is set: got %v, want Unauthenticated", err)
	}
	u = ApplyDashboardUser(u, DashboardPasswordSet{PasswordHash: "argon"})
	events, err := DecideDashboardSignIn(u, "s", time.Now())
	if err != nil || len(events) != 1 {
		t.Fatalf("with a password: got %v, %v, want one signed_in event", events, err)
	}
}

func TestCheckDashboardPassword(t *testing.T) {
	t.Parallel()
	if err := CheckDashboardPassword("short"); ErrorKind(err) != Invalid {
		t.Errorf("short password: got %v, want Invalid", err)
	}
	if err := CheckDashboardPassword("correct horse battery"); err != nil {
		t.Errorf("long password: got %v, want nil", err)
	}
}

func TestDecideCreateDashboardUserTwice(t *testing.T) {
	t.Parallel()
	c := CreateDashboardUser{UserID: uuid.New(), Email: " Ops@Acme.Example "}
	events, err := DecideCreateDashboardUser(DashboardUser{}, c)
	if err != nil || events[0].(DashboardUserCreated).Email != "ops@acme.example" {
		t.Fatalf("got %v, %v, want a created event with the normalised email", events, err)
	}
	u := ApplyDashboardUser(DashboardUser{}, events[0])
	if _, err := DecideCreateDashboardUser(u, c); ErrorKind(err) != Conflict {
		t.Fatalf("second create: got %v, want Conflict", err)
	}
}

// TestDecideDisableDashboardUser: a disabled user can neither sign in nor
// use the set-password link they had; a new link lets them in again.
func TestDecideDisableDashboardUser(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	if _, err := DecideDisableDashboardUser(DashboardUser{}); ErrorKind(err) != NotFound {
		t.Fatalf("no such user: got %v, want NotFound", err)
	}
	u := ApplyDashboardUser(DashboardUser{}, DashboardUserCreated{UserID: uuid.New(), Email: "a@b.example",
		SetupTokenHash: "first", SetupExpiresAt: now.Add(time.Hour)})
	u = ApplyDashboardUser(u, DashboardPasswordSet{PasswordHash: "argon"})
	u = ApplyDashboardUser(u, DashboardSetupLinkIssued{SetupTokenHash: "pending", SetupExpiresAt: now.Add(time.Hour)})
	events, err := DecideDisableDashboardUser(u)
	if err != nil || len(events) != 1 {
		t.Fatalf("got %v, %v, want one disabled event", events, err)
	}
	u = ApplyDashboardUser(u, events[0])
	if again, err := DecideDisableDashboardUser(u); err != nil || len(again) != 0 {
		t.Errorf("disabling a disabled user: got %v, %v, want nothing recorded", again, err)
	}
	if _, err := DecideDashboardSignIn(u, "session", now.Add(time.Hour)); ErrorKind(err) != Unauthenticated {
		t.Errorf("sign-in after disable: got %v, want refused", err)
	}
	if _, err := DecideSetDashboardPassword(u, "pending", "argon2", now); err == nil {
		t.Errorf("the link issued before disable: got accepted, want refused")
	}
	events, err = DecideIssueDashboardSetupLink(u, "again", now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	u = ApplyDashboardUser(u, events[0])
	if _, err := DecideSetDashboardPassword(u, "again", "argon2", now); err != nil {
		t.Errorf("a new link after disable: got %v, want it to work", err)
	}
	if events, err := DecideDisableDashboardUser(u); err != nil || len(events) != 1 {
		t.Errorf("disabling a user with a new link: got %v, %v, want one disabled event", events, err)
	}
}

func TestSignInLockoutAdmits(t *testing.T) {
	t.Parallel()
	l := SignInLockout{PerClient: 5, PerAddress: 20, PerClientAllAddresses: 30}
	for _, c := range []struct {
		failures SignInFailures
		want     bool
	}{
		{SignInFailures{}, true},
		{SignInFailures{4, 19, 29}, true},
		{SignInFailures{5, 5, 5}, false},  // this client's limit at the address
		{SignInFailures{0, 20, 0}, false}, // the address's ceiling, whoever asks
		{SignInFailures{4, 20, 4}, false},
		{SignInFailures{0, 0, 30}, false}, // this client's ceiling over every address it tried
	} {
		if got := l.Admits(c.failures); got != c.want {
			t.Errorf("Admits(%+v) = %v, want %v", c.failures, got, c.want)
		}
	}
}
