package dashboard

import "net/http"

// routes is the dashboard's route table. Pages behind signedIn need a
// session; every POST goes through form, which checks the CSRF token.
func (d *Dashboard) routes() *http.ServeMux {
	m := http.NewServeMux()
	m.Handle("GET /dashboard/static/", d.handle(d.static))
	m.Handle("GET /dashboard", http.RedirectHandler("/dashboard/payments", http.StatusSeeOther))
	m.Handle("GET /dashboard/{$}", http.RedirectHandler("/dashboard/payments", http.StatusSeeOther))

	m.Handle("GET /dashboard/sign-in", d.handle(d.signInPage))
	m.Handle("POST /dashboard/sign-in", d.form(d.signIn))
	m.Handle("GET /dashboard/set-password", d.handle(d.setPasswordPage))
	m.Handle("POST /dashboard/set-password", d.form(d.setPassword))

	m.Handle("POST /dashboard/sign-out", d.signedIn(d.form(d.signOut)))
	m.Handle("GET /dashboard/api-keys", d.signedIn(d.handle(d.apiKeysPage)))
	m.Handle("POST /dashboard/api-keys", d.signedIn(d.form(d.createAPIKey)))
	m.Handle("POST /dashboard/api-keys/{apiKey}/revoke", d.signedIn(d.form(d.revokeAPIKey)))
	m.Handle("GET /dashboard/payments", d.signedIn(d.handle(d.paymentsPage)))
	m.Handle("GET /dashboard/payments/{paymentId}", d.signedIn(d.handle(d.paymentPage)))
	m.Handle("GET /dashboard/live", d.signedIn(d.handle(d.live)))
	m.Handle("GET /dashboard/users", d.signedIn(d.handle(d.usersPage)))
	m.Handle("GET /dashboard/users/{userId}", d.signedIn(d.handle(d.userPage)))
	m.Handle("GET /dashboard/events", d.signedIn(d.handle(d.eventsPage)))
	m.Handle("GET /dashboard/balances", d.signedIn(d.handle(d.balancesPage)))
	m.Handle("GET /dashboard/unmatched", d.signedIn(d.handle(d.unmatchedPage)))
	m.Handle("GET /dashboard/reconciliation", d.signedIn(d.handle(d.breaksPage)))
	m.Handle("GET /dashboard/reconciliation/runs", d.signedIn(d.handle(d.runsPage)))
	m.Handle("POST /dashboard/reconciliation/{breakId}/resolve", d.signedIn(d.form(d.resolveBreak)))
	m.Handle("/dashboard/", d.handle(func(w http.ResponseWriter, r *http.Request) error { return errNotFound }))
	return m
}
