package main

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/ledger/ledger/domain"
)

// dashboardUserLink is what ledgerctl dashboard-user add prints.
type dashboardUserLink struct {
	DashboardUserID string `json:"dashboardUserId"`
	SetPasswordURL  string `json:"setPasswordUrl"`
}

// addDashboardUser creates a dashboard user of tenantID with ledgerctl.
func (s *testServer) addDashboardUser(t *testing.T, tenantID, email string) dashboardUserLink {
	t.Helper()
	var u dashboardUserLink
	mustDecode(t, s.ledgerctl(t, "dashboard-user", "add", "--tenant", tenantID, "--email", email, "--public-url", s.URL), &u)
	if !strings.HasPrefix(u.SetPasswordURL, s.URL+"/dashboard/set-password?token=") {
		t.Fatalf("setPasswordUrl: got %q, want a link to this server's set-password page", u.SetPasswordURL)
	}
	return u
}

// signInToDashboard sets a password through the link and signs in.
func signInToDashboard(t *testing.T, ctx context.Context, link, email, password, artifacts string) {
	t.Helper()
	browse(t, ctx, "set password",
		chromedp.Navigate(link),
		chromedp.WaitVisible(chromedp.CSS(`input#confirm`)),
		chromedp.SendKeys(chromedp.CSS(`input#password`), password),
		chromedp.SendKeys(chromedp.CSS(`input#confirm`), password),
	)
	screenshot(t, ctx, artifacts, "01-set-password")
	browse(t, ctx, "submit password",
		chromedp.Click(chromedp.CSS(`form[action="/dashboard/set-password"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`p.notice`)),
		chromedp.SendKeys(chromedp.CSS(`input#email`), email),
		chromedp.SendKeys(chromedp.CSS(`input#password`), password),
	)
	screenshot(t, ctx, artifacts, "02-sign-in")
	browse(t, ctx, "sign in",
		chromedp.Click(chromedp.CSS(`form[action="/dashboard/sign-in"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`form.filters select#status`)),
	)
}

// fetchStatus is the status of a fetch made by the page (with its cookies).
func fetchStatus(t *testing.T, ctx context.Context, what, url, init string) int {
	t.Helper()
	return value(t, ctx, what, chromedp.Evaluate[int](`fetch(`+strconv.Quote(url)+`, `+init+`).then(r => r.status)`,
		chromedp.EvalAwaitPromise))
}

// TestDashboardInBrowser drives the partner dashboard in headless Chromium:
// set a password and sign in; create an API key and see its secret once
// (not after a reload); use it against the API; revoke it and see the API
// refuse it; watch a payment reach success live; see nothing of another
// tenant; have a form post without the CSRF token refused. Screenshots of
// every page go to LEDGER_E2E_ARTIFACTS.
func TestDashboardInBrowser(t *testing.T) {
	t.Parallel()
	ctx := newBrowser(t)
	artifacts := artifactDir(t)
	// The viewer is in Johannesburg (UTC+2): pages show times there, UTC on hover.
	if _, err := chromedp.Call(ctx, emulation.SetTimezoneOverride,
		emulation.SetTimezoneOverrideParams{TimezoneID: "Africa/Johannesburg"}); err != nil {
		t.Fatalf("set the browser's time zone: %v", err)
	}
	s := startServer(t, nil)
	began := time.Now().UTC().Add(-time.Minute).Truncate(time.Second)
	acme, other := s.createTenant(t, "Acme"), s.createTenant(t, "Otherco")
	tok, otherTok := s.tenantToken(t, acme.APIKey, acme.APISecret), s.tenantToken(t, other.APIKey, other.APISecret)
	merchant := mustStatus(t, s.call(t, http.MethodPost, "/merchants", tok,
		`{"name":"Shoprite","country":"SouthAfrica","bankName":"Capitec Bank","accountNumber":"1234567890"}`), http.StatusCreated)["id"].(string)
	ann := s.createUser(t, tok, "ann@example.com", "Ann Njeri")["userId"].(string)
	mustStatus(t, s.upload(t, ann, tok, typePart("passport"), filePart("passport.pdf", pdfBytes)), http.StatusCreated)
	otherMerchant := mustStatus(t, s.call(t, http.MethodPost, "/merchants", otherTok,
		`{"name":"Elsewhere","country":"SouthAfrica","bankName":"Nedbank","accountNumber":"1234567890"}`), http.StatusCreated)["id"].(string)
	otherPayment := mustStatus(t, s.call(t, http.MethodPost, "/payments", otherTok,
		fmt.Sprintf(`{"merchantId":%q,"amount":2500,"reference":"Theirs"}`, otherMerchant)), http.StatusCreated)["id"].(string)

	const email, password = "ops@acme.example", "correct horse battery staple"
	link := s.addDashboardUser(t, acme.TenantID, email)
	signInToDashboard(t, ctx, link.SetPasswordURL, email, password, artifacts)
	// The password's argon2id hash is sealed in its event, which every
	// holder of the tenant's API keys reads in GET /events: signing in
	// above went through the sealed hash.
	var stored string
	s.queryRow(t, `SELECT data->>'passwordHash' FROM events WHERE type = 'dashboard_user.password_set' AND stream_id = $1`,
		[]any{link.DashboardUserID}, &stored)
	if !strings.HasPrefix(stored, "sealed:v1:") || strings.Contains(stored, "argon2") {
		t.Errorf("dashboard_user.password_set passwordHash: got %.30q..., want it sealed", stored)
	}

	// An API key: its secret is shown once, on the page after the create.
	browse(t, ctx, "create an API key",
		chromedp.Navigate(s.URL+"/dashboard/api-keys"),
		chromedp.Click(chromedp.CSS(`#create-key`)),
		chromedp.WaitVisible(chromedp.CSS(`#new-api-secret`)),
	)
	apiKey := value(t, ctx, "read the key", chromedp.Text(chromedp.CSS(`#new-api-key`)))
	secret := value(t, ctx, "read the secret", chromedp.Text(chromedp.CSS(`#new-api-secret`)))
	screenshot(t, ctx, artifacts, "03-api-key-created")
	if !strings.HasPrefix(apiKey, "lk_") || !strings.HasPrefix(secret, "lsk_") {
		t.Fatalf("new key: got %q / %q, want lk_... and lsk_...", apiKey, secret)
	}
	browse(t, ctx, "reload the API keys page",
		chromedp.Reload(),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-api-key="`+apiKey+`"]`)),
	)
	reloaded := value(t, ctx, "read the reloaded page", chromedp.OuterHTML(chromedp.CSS(`html`)))
	if strings.Contains(reloaded, secret) || strings.Contains(reloaded, `id="new-key"`) {
		t.Errorf("after a reload: got the secret on the page again, want it shown once")
	}
	screenshot(t, ctx, artifacts, "04-api-keys")
	var actor string
	s.queryRow(t, `SELECT metadata->>'actor' FROM events WHERE type = 'tenant.api_key_created' AND data->>'apiKey' = $1`,
		[]any{apiKey}, &actor)
	if want := "dashboard_user:" + link.DashboardUserID; actor != want {
		t.Errorf("api_key_created actor: got %q, want %q", actor, want)
	}

	// The key works against the API until it is revoked in the dashboard.
	keyTok := s.tenantToken(t, apiKey, secret)
	mustStatus(t, s.call(t, http.MethodGet, "/payments", keyTok, ""), http.StatusOK)
	browse(t, ctx, "see the key's last use", chromedp.Reload(),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-api-key="`+apiKey+`"] td:nth-child(3) time`)))
	browse(t, ctx, "revoke the API key",
		chromedp.Click(chromedp.CSS(`form[action="/dashboard/api-keys/`+apiKey+`/revoke"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-api-key="`+apiKey+`"] .status-failed`)),
	)
	mustProblem(t, s.post(t, "/token", "", fmt.Sprintf(`{"apiKey":%q,"apiSecret":%q}`, apiKey, secret)), http.StatusUnauthorized, "")
	mustProblem(t, s.call(t, http.MethodGet, "/payments", keyTok, ""), http.StatusUnauthorized, "")

	// A payment's page follows it to success live, without a reload.
	payment := mustStatus(t, s.call(t, http.MethodPost, "/payments", tok,
		fmt.Sprintf(`{"merchantId":%q,"amount":1500,"reference":"Invoice 42"}`, merchant)), http.StatusCreated)["id"].(string)
	browse(t, ctx, "open the payment",
		chromedp.Navigate(s.URL+"/dashboard/payments/"+payment),
		chromedp.WaitVisible(chromedp.CSS(`#payment-status`)),
		chromedp.Poll[chromedp.Void](`document.body.dataset.live === "open"`, chromedp.WithPollingTimeout(10*time.Second)),
	)
	screenshot(t, ctx, artifacts, "05-payment-created")
	mustStatus(t, s.call(t, http.MethodPost, "/sandbox/payments/"+payment+"/deposit", tok, ""), http.StatusAccepted)
	browse(t, ctx, "watch the payment reach success",
		chromedp.Poll[chromedp.Void](`document.getElementById("payment-status").textContent === "success"`,
			chromedp.WithPollingTimeout(30*time.Second)))
	// The rest of the page follows: the whole timeline, the settled amount
	// and the payment's events with their hashes, still without a reload.
	browse(t, ctx, "watch the page's sections follow",
		chromedp.Poll[chromedp.Void](`document.querySelectorAll("#timeline li").length === 4 &&
			document.getElementById("section-amounts").textContent.includes("Settled") &&
			document.getElementById("section-events").textContent.includes("payment.success")`,
			chromedp.WithPollingTimeout(15*time.Second)))
	if reloads := value(t, ctx, "count page loads", chromedp.Evaluate[int](`performance.getEntriesByType("navigation").length`)); reloads != 1 {
		t.Errorf("page loads: got %d, want 1 (live updates, no reload)", reloads)
	}
	screenshot(t, ctx, artifacts, "06-payment-success")
	if local := value(t, ctx, "read a time", chromedp.Evaluate[bool](`(() => {
		const el = document.querySelector("#section-details time");
		const there = new Intl.DateTimeFormat(undefined, {dateStyle: "medium", timeStyle: "medium", timeZone: "Africa/Johannesburg"});
		return el.textContent === there.format(new Date(el.dateTime)) && el.title.endsWith(" UTC") &&
			el.title.startsWith(el.dateTime.slice(0, 10));
	})()`)); !local {
		t.Errorf("times: got them not in the viewer's zone (Africa/Johannesburg) with UTC on hover")
	}
	browse(t, ctx, "payments list", chromedp.Navigate(s.URL+"/dashboard/payments"),
		chromedp.WaitVisible(chromedp.CSS(`[data-payment-status="`+payment+`"]`)),
		chromedp.Poll[chromedp.Void](`document.body.dataset.live === "open"`, chromedp.WithPollingTimeout(10*time.Second)))
	// A payment created meanwhile joins the list without a reload.
	second := mustStatus(t, s.call(t, http.MethodPost, "/payments", tok,
		fmt.Sprintf(`{"merchantId":%q,"amount":250000,"reference":"Invoice 43"}`, merchant)), http.StatusCreated)["id"].(string)
	browse(t, ctx, "watch the new payment join the list",
		chromedp.WaitVisible(chromedp.CSS(`[data-payment-status="`+second+`"]`)))
	screenshot(t, ctx, artifacts, "07-payments")

	// Another tenant's payment and user are not there, and its events not shown.
	// Nor are the operator's reconciliation runs.
	for _, path := range []string{"/dashboard/payments/" + otherPayment, "/dashboard/users/" + other.OwnerUserID,
		"/dashboard/reconciliation/runs"} {
		browse(t, ctx, "open "+path, chromedp.Navigate(s.URL+path))
		h1 := value(t, ctx, "read the heading", chromedp.Text(chromedp.CSS(`h1`)))
		page := value(t, ctx, "read the page", chromedp.OuterHTML(chromedp.CSS(`html`)))
		if h1 != "Not Found" || strings.Contains(page, "Theirs") || strings.Contains(page, "otherco@example.com") {
			t.Errorf("%s: got heading %q, want Not Found and nothing of the other tenant", path, h1)
		}
	}
	screenshot(t, ctx, artifacts, "08-other-tenant")
	liveStatus := fetchStatus(t, ctx, "live stream of another tenant's payment", "/dashboard/live?payment="+otherPayment, "{}")
	if liveStatus != http.StatusNotFound {
		t.Errorf("live stream of another tenant's payment: got %d, want 404", liveStatus)
	}

	// A form post without the CSRF token (or with a forged one) is refused.
	for _, body := range []string{"", "csrf=forged"} {
		status := fetchStatus(t, ctx, "post without the CSRF token", "/dashboard/api-keys", `{method: "POST",
			headers: {"Content-Type": "application/x-www-form-urlencoded"}, body: "`+body+`", redirect: "manual"}`)
		if status != http.StatusForbidden {
			t.Errorf("POST /dashboard/api-keys with body %q: got %d, want 403", body, status)
		}
	}
	var keys int
	s.queryRow(t, `SELECT count(*) FROM api_keys WHERE tenant_id = $1`, []any{acme.TenantID}, &keys)
	if keys != 2 {
		t.Errorf("api keys: got %d, want 2 (the first and the dashboard's; no key from a refused post)", keys)
	}

	// The other pages, for the record.
	for _, page := range []struct{ name, path, ready string }{
		{"09-users", "/dashboard/users?q=ann", `a[href^="/dashboard/users/"]`},
		{"11-events", "/dashboard/events", `ol.events details`},
		{"12-balances", "/dashboard/balances", `tfoot`},
	} {
		browse(t, ctx, "open "+page.path, chromedp.Navigate(s.URL+page.path), chromedp.WaitVisible(chromedp.CSS(page.ready)))
		screenshot(t, ctx, artifacts, page.name)
		if page.name == "09-users" {
			browse(t, ctx, "open a user", chromedp.Click(chromedp.CSS(page.ready)), chromedp.WaitVisible(chromedp.CSS(`#kyc`)))
			screenshot(t, ctx, artifacts, "10-user")
			doc := value(t, ctx, "download the user's document", chromedp.Evaluate[string](
				`fetch(document.querySelector("#section-documents a[download]").href).then(r => r.text())`, chromedp.EvalAwaitPromise))
			if doc != string(pdfBytes) {
				t.Errorf("document download: got %q, want the uploaded file", doc)
			}
		}
	}
	browse(t, ctx, "phone-sized payment page", chromedp.EmulateViewport(390, 844),
		chromedp.Navigate(s.URL+"/dashboard/payments/"+payment), chromedp.WaitVisible(chromedp.CSS(`#payment-status`)))
	screenshot(t, ctx, artifacts, "13-payment-phone")

	// The operator's dashboard user, in a browser context of its own, sees
	// a reconciliation of the day so far: the sandbox payout matched, and
	// one made by hand at the provider a new break.
	s.queryRow(t, `INSERT INTO sandbox_payouts (id, payment_id, idempotency_key, rail, amount, currency, destination, status, reason, created_at)
		VALUES (gen_random_uuid(), gen_random_uuid(), 'paid-by-hand', 'BANK', 250, 'ZAR', '1234567890', 'completed', '', now()) RETURNING ''`,
		nil, new(string))
	s.reconcile(t, "BANK", began, time.Now().UTC().Add(time.Minute))
	ops, cancelOps := chromedp.NewContext(ctx, chromedp.WithNewBrowserContext())
	defer cancelOps()
	opsLink := s.addDashboardUser(t, domain.OperatorBooks.String(), "ops@operator.example")
	signInToDashboard(t, ops, opsLink.SetPasswordURL, "ops@operator.example", password, t.TempDir())
	browse(t, ops, "open the reconciliation runs", chromedp.Navigate(s.URL+"/dashboard/reconciliation"),
		chromedp.Click(chromedp.CSS(`a[href="/dashboard/reconciliation/runs"]`)), chromedp.WaitVisible(chromedp.CSS(`tr.run`)))
	screenshot(t, ops, artifacts, "14-reconciliation-runs")
	run := value(t, ops, "read the run", chromedp.Text(chromedp.CSS(`tr.run`)))
	for _, want := range []string{"BANK", "operator:ann", "2 / 1", "provider_only 1", "1 new"} {
		if !strings.Contains(run, want) {
			t.Errorf("the reconciliation run: got %q, want %q in it", run, want)
		}
	}
	browse(t, ops, "sign the operator out", chromedp.Click(chromedp.CSS(`form.signout button`)),
		chromedp.WaitVisible(chromedp.CSS(`p.notice`)))

	// Signing out (here in a second tab) closes the session server-side,
	// not only in the browser. The first tab keeps a live page open, which
	// the server's graceful stop must end rather than wait for.
	browse(t, ctx, "keep a live page open", chromedp.EmulateViewport(1280, 900), chromedp.Navigate(s.URL+"/dashboard/payments"),
		chromedp.Poll[chromedp.Void](`document.body.dataset.live === "open"`, chromedp.WithPollingTimeout(10*time.Second)))
	tab2, cancelTab2 := chromedp.NewContext(ctx)
	defer cancelTab2()
	browse(t, tab2, "sign out", chromedp.Navigate(s.URL+"/dashboard/payments"),
		chromedp.Click(chromedp.CSS(`form.signout button`)), chromedp.WaitVisible(chromedp.CSS(`p.notice`)))
	var open int
	s.queryRow(t, `SELECT count(*) FROM dashboard_sessions WHERE revoked_at IS NULL`, nil, &open)
	if open != 0 {
		t.Errorf("open sessions after sign-out: got %d, want 0", open)
	}
	stopped := time.Now()
	if err := s.stop(); err != nil {
		t.Errorf("stop with a live page open: got %v, want nil", err)
	}
	if d := time.Since(stopped); d > 10*time.Second {
		t.Errorf("stop with a live page open: took %v, want the live stream ended at once", d)
	}
}
