package domain

import (
	"crypto/subtle"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
)

// DashboardUser is a person at a partner who signs in to the partner
// dashboard (spec §5.1): operations, compliance or audit staff. Its stream
// (type "dashboard_user", in the partner's tenant) records the account, its
// password and every sign-in and sign-out, so an auditor sees who could act
// in the dashboard and when. Secrets appear only as hashes; the hashing
// (argon2id for passwords, SHA-256 for random tokens) happens at the edge.
type DashboardUser struct {
	ID             uuid.UUID
	Email          string
	PasswordHash   string    // empty until the set-password link is used
	SetupTokenHash string    // SHA-256 of the one-time set-password token; empty once used
	SetupExpiresAt time.Time // when the set-password link stops working
	OpenSessions   []string  // the hashes of the sessions signed in and not yet signed out or revoked
}

// DashboardUserCreated opens a dashboard user's stream with a one-time
// set-password link, of which only the token's hash is kept.
type DashboardUserCreated struct {
	UserID         uuid.UUID `json:"userId"`
	Email          string    `json:"email" ledger:"personal"`
	SetupTokenHash string    `json:"setupTokenHash" ledger:"secret"`
	SetupExpiresAt time.Time `json:"setupExpiresAt"`
}

// DashboardSetupLinkIssued records a new one-time set-password link for an
// existing dashboard user (a forgotten password, an expired link). The
// current password keeps working until the link is used.
type DashboardSetupLinkIssued struct {
	SetupTokenHash string    `json:"setupTokenHash" ledger:"secret"`
	SetupExpiresAt time.Time `json:"setupExpiresAt"`
}

// DashboardPasswordSet records a password chosen through the set-password
// link, which it uses up. It ends every open session of the user: whoever
// knew the old password is signed out.
type DashboardPasswordSet struct {
	PasswordHash string `json:"passwordHash" ledger:"secret"` // argon2id, PHC string format
}

// DashboardSignedIn records a sign-in and the session it opened. The
// session is stored only as the SHA-256 of its random id.
type DashboardSignedIn struct {
	SessionHash string    `json:"sessionHash" ledger:"secret"`
	ExpiresAt   time.Time `json:"expiresAt"`
}

// DashboardSignedOut records the end of one session (sign-out or revocation).
type DashboardSignedOut struct {
	SessionHash string `json:"sessionHash" ledger:"secret"`
}

// DashboardUserDisabled records that an operator took a dashboard user's
// access away (someone who left the partner): the password and any
// set-password link stop working and every open session ends. A new
// set-password link (DashboardSetupLinkIssued) lets them in again.
type DashboardUserDisabled struct{}

func (DashboardUserCreated) EventType() string     { return "dashboard_user.created" }
func (DashboardUserDisabled) EventType() string    { return "dashboard_user.disabled" }
func (DashboardSetupLinkIssued) EventType() string { return "dashboard_user.setup_link_issued" }
func (DashboardPasswordSet) EventType() string     { return "dashboard_user.password_set" }
func (DashboardSignedIn) EventType() string        { return "dashboard_user.signed_in" }
func (DashboardSignedOut) EventType() string       { return "dashboard_user.signed_out" }

var (
	_ = register(EventDef{Type: "dashboard_user.created", Version: 1, New: func() Event { return new(DashboardUserCreated) },
		Doc: "A partner dashboard user was created with a one-time set-password link."})
	_ = register(EventDef{Type: "dashboard_user.setup_link_issued", Version: 1, New: func() Event { return new(DashboardSetupLinkIssued) },
		Doc: "A new one-time set-password link was issued to a dashboard user."})
	_ = register(EventDef{Type: "dashboard_user.password_set", Version: 1, New: func() Event { return new(DashboardPasswordSet) },
		Doc: "A dashboard user set a password through the set-password link, which it used up; their open sessions ended."})
	_ = register(EventDef{Type: "dashboard_user.signed_in", Version: 1, New: func() Event { return new(DashboardSignedIn) },
		Doc: "A dashboard user signed in, opening a session."})
	_ = register(EventDef{Type: "dashboard_user.signed_out", Version: 1, New: func() Event { return new(DashboardSignedOut) },
		Doc: "A dashboard session ended: the user signed out or it was revoked."})
	_ = register(EventDef{Type: "dashboard_user.disabled", Version: 1, New: func() Event { return new(DashboardUserDisabled) },
		Doc: "A dashboard user's access was taken away: their password and set-password link stopped working and their open sessions ended."})
)

// MinPasswordLength is the shortest dashboard password accepted (NIST SP
// 800-63B asks for at least 8; the dashboard can move money's credentials).
const MinPasswordLength = 12

// ApplyDashboardUser folds one event into u. It cannot fail: events are facts.
func ApplyDashboardUser(u DashboardUser, e Event) DashboardUser {
	switch e := e.(type) {
	case DashboardUserCreated:
		u.ID, u.Email, u.SetupTokenHash, u.SetupExpiresAt = e.UserID, e.Email, e.SetupTokenHash, e.SetupExpiresAt
	case DashboardSetupLinkIssued:
		u.SetupTokenHash, u.SetupExpiresAt = e.SetupTokenHash, e.SetupExpiresAt
	case DashboardPasswordSet:
		u.PasswordHash, u.SetupTokenHash, u.OpenSessions = e.PasswordHash, "", nil
	case DashboardUserDisabled:
		u.PasswordHash, u.SetupTokenHash, u.SetupExpiresAt, u.OpenSessions = "", "", time.Time{}, nil
	case DashboardSignedIn:
		u.OpenSessions = append(slices.Clip(u.OpenSessions), e.SessionHash)
	case DashboardSignedOut:
		u.OpenSessions = slices.DeleteFunc(slices.Clone(u.OpenSessions), func(h string) bool { return h == e.SessionHash })
	}
	return u
}

// CreateDashboardUser is the operator's command to let someone at a partner
// into its dashboard.
type CreateDashboardUser struct {
	UserID         uuid.UUID
	Email          string
	SetupTokenHash string
	SetupExpiresAt time.Time
}

// DecideCreateDashboardUser returns the first event of a new dashboard user.
func DecideCreateDashboardUser(u DashboardUser, c CreateDashboardUser) ([]Event, error) {
	if u.ID != uuid.Nil {
		return nil, Errorf(Conflict, "dashboard_user_exists", "the dashboard user already exists")
	}
	email, err := NormaliseEmail(c.Email)
	if err != nil {
		return nil, err
	}
	return []Event{DashboardUserCreated{UserID: c.UserID, Email: email, SetupTokenHash: c.SetupTokenHash,
		SetupExpiresAt: c.SetupExpiresAt}}, nil
}

// DecideIssueDashboardSetupLink gives an existing dashboard user a new
// set-password link; an unused earlier link stops working.
func DecideIssueDashboardSetupLink(u DashboardUser, tokenHash string, expiresAt time.Time) ([]Event, error) {
	if u.ID == uuid.Nil {
		return nil, Errorf(NotFound, "not_found", "dashboard user not found")
	}
	return []Event{DashboardSetupLinkIssued{SetupTokenHash: tokenHash, SetupExpiresAt: expiresAt}}, nil
}

// errSetupLinkInvalid does not say whether the link was wrong, used or
// expired: all three mean "ask the operator for a new one".
var errSetupLinkInvalid = Errorf(Invalid, "setup_link_invalid", "this set-password link is not valid any more")

// CheckDashboardPassword is the password rule, decided before the password
// is hashed (the hash hides its length).
func CheckDashboardPassword(password string) error {
	if n := utf8.RuneCountInString(password); n < MinPasswordLength || n > 256 {
		return Invalidf("password", "must be %d to 256 characters", MinPasswordLength)
	}
	return nil
}

// DecideSetDashboardPassword sets the password of u when tokenHash is its
// unexpired set-password token, which the event uses up.
func DecideSetDashboardPassword(u DashboardUser, tokenHash, passwordHash string, now time.Time) ([]Event, error) {
	if u.ID == uuid.Nil || u.SetupTokenHash == "" || !now.Before(u.SetupExpiresAt) ||
		subtle.ConstantTimeCompare([]byte(u.SetupTokenHash), []byte(tokenHash)) != 1 {
		return nil, errSetupLinkInvalid
	}
	return []Event{DashboardPasswordSet{PasswordHash: passwordHash}}, nil
}

// DecideDashboardSignIn opens a session for u, whose password the caller
// has verified against u.PasswordHash.
func DecideDashboardSignIn(u DashboardUser, sessionHash string, expiresAt time.Time) ([]Event, error) {
	if u.ID == uuid.Nil || u.PasswordHash == "" {
		return nil, Errorf(Unauthenticated, "sign_in_failed", "wrong email or password")
	}
	return []Event{DashboardSignedIn{SessionHash: sessionHash, ExpiresAt: expiresAt}}, nil
}

// DecideDisableDashboardUser takes u's access away. A user with neither a
// password nor a set-password link has none (disabled already, or never
// given one that still stands) and no session (one opens only with a
// password): nothing is recorded, so an operator repeating the command
// leaves no second event in the history.
func DecideDisableDashboardUser(u DashboardUser) ([]Event, error) {
	if u.ID == uuid.Nil {
		return nil, Errorf(NotFound, "not_found", "dashboard user not found")
	}
	if u.PasswordHash == "" && u.SetupTokenHash == "" {
		return nil, nil
	}
	return []Event{DashboardUserDisabled{}}, nil
}

// DecideDashboardSignOut ends one of u's sessions.
func DecideDashboardSignOut(u DashboardUser, sessionHash string) ([]Event, error) {
	if u.ID == uuid.Nil {
		return nil, Errorf(NotFound, "not_found", "dashboard user not found")
	}
	return []Event{DashboardSignedOut{SessionHash: sessionHash}}, nil
}

// SignInLockout is the dashboard sign-in's lock-out rule: an attempt at an
// address is refused once PerClient attempts at it from the same client, or
// PerAddress from any client, failed after Since, or PerClientAllAddresses
// from the same client at any addresses. Counting per client keeps one
// source's guesses from locking the address's owner out everywhere; the
// per-address ceiling bounds guesses spread over many sources, and only
// such a spread can lock the owner out. The ceiling across addresses
// bounds one source trying many addresses, each attempt a password hash
// to compute.
type SignInLockout struct {
	Since                 time.Time
	PerClient             int
	PerAddress            int
	PerClientAllAddresses int
}

// SignInFailures are the failed sign-ins after SignInLockout.Since that
// bear on an attempt.
type SignInFailures struct {
	FromClient             int // at the attempt's address, from its client
	FromAnywhere           int // at the attempt's address, from any client
	FromClientAllAddresses int // from the attempt's client, at any address
}

// Admits reports whether an attempt with the failures f is let through.
func (l SignInLockout) Admits(f SignInFailures) bool {
	return f.FromClient < l.PerClient && f.FromAnywhere < l.PerAddress && f.FromClientAllAddresses < l.PerClientAllAddresses
}
