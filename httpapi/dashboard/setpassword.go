package dashboard

import (
	"net/http"

	"github.com/ledger/ledger/domain"
)

type setPasswordView struct {
	Token, Email, Error string
}

// setPasswordPage is GET /dashboard/set-password?token=: the form behind
// the one-time link ledgerctl dashboard-user add prints.
func (d *Dashboard) setPasswordPage(w http.ResponseWriter, r *http.Request) error {
	token := r.URL.Query().Get("token")
	acct, err := d.Accounts.DashboardAccountBySetupToken(r.Context(), tokenHash(token))
	if domain.ErrorKind(err) == domain.NotFound {
		return domain.Errorf(domain.NotFound, "setup_link_invalid",
			"This set-password link is not valid any more. Ask your operator for a new one.")
	}
	if err != nil {
		return err
	}
	d.render(w, r, http.StatusOK, "set-password", "Set your password", setPasswordView{Token: token, Email: acct.Email})
	return nil
}

// setPassword is POST /dashboard/set-password: hash the new password and
// append dashboard_user.password_set, which uses the link up.
func (d *Dashboard) setPassword(w http.ResponseWriter, r *http.Request) error {
	token, password := r.PostFormValue("token"), r.PostFormValue("password")
	acct, err := d.Accounts.DashboardAccountBySetupToken(r.Context(), tokenHash(token))
	if domain.ErrorKind(err) == domain.NotFound {
		return domain.Errorf(domain.NotFound, "setup_link_invalid",
			"This set-password link is not valid any more. Ask your operator for a new one.")
	}
	if err != nil {
		return err
	}
	again := func(msg string) error {
		d.render(w, r, http.StatusBadRequest, "set-password", "Set your password",
			setPasswordView{Token: token, Email: acct.Email, Error: msg})
		return nil
	}
	if err := domain.CheckDashboardPassword(password); err != nil {
		return again("Choose a password of at least 12 characters.")
	}
	if password != r.PostFormValue("confirm") {
		return again("The two passwords differ.")
	}
	meta := viewer{DashboardSession: domain.DashboardSession{UserID: acct.ID}}.metadata()
	hash, err := d.Secrets.Seal(r.Context(), hashPassword(password))
	if err != nil {
		return err
	}
	now := d.now()
	if err := d.Accounts.SetDashboardPassword(r.Context(), acct.TenantID, acct.ID, tokenHash(token), hash, now, meta); err != nil {
		return err
	}
	http.Redirect(w, r, "/dashboard/sign-in?password-set", http.StatusSeeOther)
	return nil
}
