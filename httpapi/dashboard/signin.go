package dashboard

import (
	"net/http"
	"time"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/httpapi/clientkey"
)

// The lock-out (domain.SignInLockout): after lockoutFailures failed
// sign-ins of one address from one client within lockoutWindow, that client
// cannot sign in to that address until the window has moved on, whatever
// the password; after lockoutAddressFailures from any clients, no client
// can; and a client with lockoutClientFailures failures at any addresses
// cannot sign in anywhere, so one source trying address after address
// gets no password hash computed past that. It is counted whether or not
// an account has the address, so it does not reveal which addresses do. A
// client is the connection's peer, an IPv6 one by its /64 (clientkey.Of).
const (
	lockoutFailures        = 5
	lockoutAddressFailures = 20
	lockoutClientFailures  = 30
	lockoutWindow          = 15 * time.Minute
)

const wrongCredentials = "Wrong email or password."

type signInView struct {
	Email, Error, Notice string
}

// signInPage is GET /dashboard/sign-in.
func (d *Dashboard) signInPage(w http.ResponseWriter, r *http.Request) error {
	var v signInView
	switch {
	case r.URL.Query().Has("password-set"):
		v.Notice = "Your password is set. Sign in with it."
	case r.URL.Query().Has("signed-out"):
		v.Notice = "You have signed out."
	}
	d.render(w, r, http.StatusOK, "sign-in", "Sign in", v)
	return nil
}

// signIn is POST /dashboard/sign-in: check the password, append
// dashboard_user.signed_in with a new session's hash, set its cookie.
func (d *Dashboard) signIn(w http.ResponseWriter, r *http.Request) error {
	ctx, now := r.Context(), d.now()
	password := r.PostFormValue("password")
	refuse := func(status int, msg string) error {
		d.render(w, r, status, "sign-in", "Sign in", signInView{Email: r.PostFormValue("email"), Error: msg})
		return nil
	}
	email, err := domain.NormaliseEmail(r.PostFormValue("email"))
	if err != nil {
		return refuse(http.StatusUnauthorized, wrongCredentials)
	}
	// The attempt counts as failed until the password proves right.
	lockout := domain.SignInLockout{Since: now.Add(-lockoutWindow), PerClient: lockoutFailures, PerAddress: lockoutAddressFailures,
		PerClientAllAddresses: lockoutClientFailures}
	client := clientkey.Of(r)
	admitted, err := d.Accounts.ReserveSignInAttempt(ctx, email, client, now, lockout)
	if err != nil {
		return err
	}
	if !admitted {
		return refuse(http.StatusTooManyRequests, "Too many failed sign-ins. Wait 15 minutes, then try again.")
	}
	acct, err := d.Accounts.DashboardAccountByEmail(ctx, email)
	if err != nil && domain.ErrorKind(err) != domain.NotFound {
		return err
	}
	if acct.PasswordHash == "" {
		checkPassword(dummyHash(), password) // the same time as a wrong password
		return refuse(http.StatusUnauthorized, wrongCredentials)
	}
	hash, err := d.Secrets.Open(ctx, acct.PasswordHash) // opened when sealed; one stored before sealing as it is
	if err != nil {
		return err
	}
	if !checkPassword(hash, password) {
		return refuse(http.StatusUnauthorized, wrongCredentials)
	}
	session := randomToken()
	meta := viewer{DashboardSession: domain.DashboardSession{UserID: acct.ID}}.metadata()
	err = d.Accounts.SignInDashboardUser(ctx, acct.TenantID, acct.ID, tokenHash(session),
		now.Add(d.cfg.SessionTTL).UTC().Truncate(time.Millisecond), meta)
	if err != nil {
		return err
	}
	if err := d.Accounts.ClearSignInFailures(ctx, email, client); err != nil {
		d.Log.Warn("clear sign-in failures", "err", err)
	}
	d.setCookie(w, sessionCookie, session, "/dashboard", d.cfg.SessionTTL)
	d.renewPreSession(w) // what was planted before sign-in is worthless after it
	http.Redirect(w, r, "/dashboard/payments", http.StatusSeeOther)
	return nil
}

// signOut is POST /dashboard/sign-out: append dashboard_user.signed_out,
// which closes the session server-side, and drop the cookie.
func (d *Dashboard) signOut(w http.ResponseWriter, r *http.Request) error {
	v := viewerFrom(r.Context())
	if err := d.Accounts.SignOutDashboardUser(r.Context(), v.TenantID, v.UserID, tokenHash(v.SessionID), v.metadata()); err != nil {
		return err
	}
	d.clearCookie(w, sessionCookie, "/dashboard")
	http.Redirect(w, r, "/dashboard/sign-in?signed-out", http.StatusSeeOther)
	return nil
}
