// Package dashboard is the partner dashboard (spec §5.1): server-
// rendered pages under /dashboard for the people at a partner who do not
// read JSON. It signs in a tenant's dashboard users, issues and revokes API
// keys (the secret shown once), and shows payments (live, over Server-Sent
// Events), users, the event history, the trial balance and the unmatched
// funds its books hold; to the operator's users, the reconciliation
// breaks and runs. It reads through the small interfaces below, which
// cmd/ledgerd fills with the same read models and event store the JSON
// API uses; every change it makes is an event whose actor is the
// dashboard user.
package dashboard

import (
	"context"
	"embed"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/ledger/ledger/domain"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Accounts are the dashboard users: sign-in reads, the sign-in lock-out,
// and commands on a dashboard user's stream.
type Accounts interface {
	DashboardAccountByEmail(ctx context.Context, email string) (domain.DashboardAccount, error)
	DashboardAccountBySetupToken(ctx context.Context, tokenHash string) (domain.DashboardAccount, error)
	DashboardSession(ctx context.Context, sessionHash string, now time.Time) (domain.DashboardSession, error)
	// ReserveSignInAttempt admits an attempt at email from client unless
	// the lock-out refuses it, recording it as failed until
	// ClearSignInFailures clears the client's failures at email.
	ReserveSignInAttempt(ctx context.Context, email, client string, at time.Time, lockout domain.SignInLockout) (bool, error)
	ClearSignInFailures(ctx context.Context, email, client string) error
	// SignInDashboardUser opens a session (its token's hash) until expiresAt.
	SignInDashboardUser(ctx context.Context, tenantID, userID uuid.UUID, sessionHash string, expiresAt time.Time, meta domain.Metadata) error
	// SignOutDashboardUser closes a session.
	SignOutDashboardUser(ctx context.Context, tenantID, userID uuid.UUID, sessionHash string, meta domain.Metadata) error
	// SetDashboardPassword uses a set-password link (its token's hash) to
	// store a password (its sealed hash).
	SetDashboardPassword(ctx context.Context, tenantID, userID uuid.UUID, setupTokenHash, passwordHash string, now time.Time, meta domain.Metadata) error
}

// Credentials are a tenant's API keys.
type Credentials interface {
	APIKeys(ctx context.Context, tenantID uuid.UUID) ([]domain.APIKeyItem, error)
	// CreateAPIKey issues a key pair; the secret is returned once and only
	// its hash is kept.
	CreateAPIKey(ctx context.Context, tenantID uuid.UUID, meta domain.Metadata) (apiKey, secret string, err error)
	RevokeAPIKey(ctx context.Context, tenantID uuid.UUID, apiKey string, meta domain.Metadata) error
}

// Payments are the payments read model (the JSON API's reads).
type Payments interface {
	Payment(ctx context.Context, tenantID, id uuid.UUID) (domain.PaymentSnapshot, error)
	ListPayments(ctx context.Context, tenantID uuid.UUID, f domain.PaymentFilter, limit int, offset string) ([]domain.PaymentSnapshot, string, error)
	ListPaymentDocuments(ctx context.Context, tenantID, paymentID uuid.UUID, limit int, offset string) ([]domain.PaymentDocumentItem, string, error)
	ListWebhookAttempts(ctx context.Context, tenantID, paymentID uuid.UUID) ([]domain.WebhookAttemptItem, error)
	ListMerchants(ctx context.Context, tenantID uuid.UUID, limit int, offset string) ([]domain.MerchantSnapshot, string, error)
	Merchant(ctx context.Context, tenantID, id uuid.UUID) (domain.MerchantSnapshot, error)
}

// Users are the users read model.
type Users interface {
	User(ctx context.Context, tenantID, userID uuid.UUID) (domain.UserSnapshot, error)
	SearchUsers(ctx context.Context, tenantID uuid.UUID, query string, limit int, offset string) ([]domain.UserListItem, string, error)
	ListKYCDocuments(ctx context.Context, tenantID, userID uuid.UUID, limit int, offset string) ([]domain.KYCDocumentItem, string, error)
}

// Events is the event history, as GET /events reads it.
type Events interface {
	TenantEvents(ctx context.Context, tenantID uuid.UUID, after int64, limit int, eventType string) ([]domain.Record, error)
	StreamHistory(ctx context.Context, stream domain.StreamRef) ([]domain.Record, error)
}

// Ledger is the double-entry postings read model, and the unmatched funds
// the tenant's books hold in suspense.
type Ledger interface {
	TrialBalance(ctx context.Context, tenantID uuid.UUID, asOf time.Time) ([]domain.AccountBalance, error)
	ListTenantUnmatched(ctx context.Context, tenantID uuid.UUID, limit int) ([]domain.UnmatchedFunds, error)
}

// Breaks are the reconciliation breaks, the operator's to work: only a
// dashboard user of the operator's books (domain.OperatorBooks) sees them.
type Breaks interface {
	ListBreaks(ctx context.Context, status string) ([]domain.Break, error)
	ResolveBreak(ctx context.Context, id uuid.UUID, reason, by string, meta domain.Metadata) (domain.Break, error)
}

// Reconciliations are the latest reconciliation runs, scheduled and asked
// for, with their reports (reconcile.History): the operator's only, as
// the breaks are.
type Reconciliations interface {
	LatestRuns(ctx context.Context, limit int) ([]domain.ReconciliationRun, error)
}

// DocumentLinks signs download links of documents (the API's presigned
// URLs). The dashboard asks only for documents it listed for the session's
// tenant.
type DocumentLinks interface {
	Sign(ctx context.Context, documentID uuid.UUID) (string, error)
}

// Feed tells the live pages which of a tenant's payments just changed.
type Feed interface {
	// PaymentChanges delivers the id of each of tenantID's payments that an
	// event is published about, until ctx ends; then the channel closes.
	PaymentChanges(ctx context.Context, tenantID uuid.UUID) (<-chan uuid.UUID, error)
}

// Config holds the dashboard's settings.
type Config struct {
	// SecureCookies marks cookies Secure. cmd/ledgerd clears it only when
	// the public URL is plain http on a loopback address, where browsers
	// would otherwise drop them.
	SecureCookies bool
	SessionTTL    time.Duration // how long a sign-in lasts (default 12h)
	// FormReadTimeout bounds how long a form's body may take to arrive
	// (default 10s). ledgerd sets no server-wide read timeout (the API
	// paces its own bodies); forms are small, so a fixed deadline stops a
	// client trickling one to hold a connection and a handler.
	FormReadTimeout time.Duration
}

// Deps are the dashboard's collaborators, plugged in by cmd/ledgerd.
type Deps struct {
	Log         *slog.Logger
	Accounts    Accounts
	Secrets     Secrets
	Credentials Credentials
	Payments    Payments
	Users       Users
	Events      Events
	Ledger      Ledger
	Documents   DocumentLinks
	Feed        Feed
	Breaks      Breaks
	Runs        Reconciliations
	Keys        Keys
}

// Keys are the keys the instances share, one per purpose
// (keys.ServerKeys): a CSRF token one instance made is good at all.
type Keys interface {
	Key(ctx context.Context, purpose string) ([]byte, error)
}

// Secrets seals what the events must keep but no reader of them may use
// (sealing.Sealer): a password's argon2id hash, which every holder of
// the tenant's API keys and every colleague could otherwise read in
// GET /events and try guesses against offline, with no lock-out.
type Secrets interface {
	Seal(ctx context.Context, secret string) (string, error)
	Open(ctx context.Context, stored string) (string, error)
}

// Dashboard serves /dashboard.
type Dashboard struct {
	cfg Config
	Deps
	pages     pages
	logged    http.Handler // the routes, logged
	now       func() time.Time
	closing   chan struct{} // closed by Close: live streams end
	closeOnce sync.Once
}

// New returns the dashboard.
func New(cfg Config, d Deps) *Dashboard {
	if cfg.SessionTTL == 0 {
		cfg.SessionTTL = 12 * time.Hour
	}
	if cfg.FormReadTimeout == 0 {
		cfg.FormReadTimeout = 10 * time.Second
	}
	db := &Dashboard{cfg: cfg, Deps: d, pages: mustParsePages(), now: time.Now, closing: make(chan struct{})}
	db.logged = db.logRequest(db.routes())
	return db
}

// ServeHTTP makes the Dashboard an http.Handler. Pages hold tenant data
// and one-time secrets, so nothing is cached and nothing is framed.
func (d *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; base-uri 'none'")
	d.logged.ServeHTTP(w, r)
}

// Close ends the open live streams, which would otherwise hold a graceful
// shutdown until its deadline (http.Server.Shutdown waits for handlers
// and does not cancel them). Browsers reconnect to another instance.
func (d *Dashboard) Close() { d.closeOnce.Do(func() { close(d.closing) }) }
