// Package httpapi is the REST API: routing, authentication, strict decoding,
// idempotency and RFC 9457 errors. Handlers are thin: decode, call one use
// case (workers/usecase) through a small interface, write the result.
package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/mux"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/semaphore"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore"
)

// Credentials is what authentication reads: API keys, and whether a token's
// principal is still allowed to act.
type Credentials interface {
	Credential(ctx context.Context, apiKey string) (domain.Credential, error)
	PrincipalActive(ctx context.Context, tenantID uuid.UUID, apiKey string, userID uuid.UUID) (bool, error)
	UserStatus(ctx context.Context, tenantID, userID uuid.UUID) (string, error)
	// TouchAPIKey records when a key last obtained a token (the partner
	// dashboard shows it).
	TouchAPIKey(ctx context.Context, apiKey string, at time.Time) error
}

// Idempotency runs a request once per Idempotency-Key (contract §1).
type Idempotency interface {
	Do(ctx context.Context, scope, key string, requestHash []byte,
		run func(ctx context.Context) eventstore.Response) (resp eventstore.Response, replayed bool, err error)
}

// Config holds the API's settings.
type Config struct {
	TenantTokenTTL time.Duration
	UserTokenTTL   time.Duration
	Issuer         string // JWT iss
	PublicURL      string // base of presigned URLs (LEDGER_PUBLIC_URL), no trailing slash

	Sandbox bool // serve the sandbox helpers under /sandbox (contract §7)

	APIKeyRate  RateLimit // per API key (a token's azp), on every authenticated route
	TokenIPRate RateLimit // per client IP, on POST /token

	// A request body must be in within BodyTimeout plus one second per
	// BodyMinRate bytes received (zero: unbounded); the response then has
	// WriteTimeout (paceBodies).
	BodyTimeout  time.Duration
	BodyMinRate  int // bytes per second
	WriteTimeout time.Duration

	// MetricsElsewhere: GET /metrics is served on an address of its own
	// (LEDGER_METRICS_ADDR), so the API does not serve it.
	MetricsElsewhere bool
	// MaxBufferedBytes is the most request body bytes the process holds
	// in memory at once (keyed requests); zero: DefaultMaxBufferedBytes.
	MaxBufferedBytes int64
}

// Server is the HTTP API.
type Server struct {
	cfg         Config
	log         *slog.Logger
	credentials Credentials
	keys        SigningKeys
	idempotency Idempotency
	users       Users
	merchants   Merchants
	payments    Payments
	sandbox     SandboxPayouts
	ledger      Ledger
	events      Events
	documents   Documents
	presigner   *Presigner
	ready       func(ctx context.Context) error
	rails       func(ctx context.Context) map[string]string
	banks       func(ctx context.Context, country string) ([]domain.Bank, error)
	unavailable func(error) bool
	metrics     *httpMetrics
	gatherer    prometheus.Gatherer

	apiKeyLimits  *limiters
	tokenIPLimits *limiters
	held          *semaphore.Weighted // Config.MaxBufferedBytes
	now           func() time.Time
	router        *mux.Router
	handler       http.Handler // router behind paceBodies and noSniff
}

// Deps are the Server's collaborators, plugged in by cmd/ledgerd.
type Deps struct {
	Log         *slog.Logger
	Credentials Credentials
	Keys        SigningKeys
	Idempotency Idempotency
	Users       Users
	Merchants   Merchants
	Payments    Payments
	Sandbox     SandboxPayouts // the sandbox payout rail's books; used when Config.Sandbox
	Ledger      Ledger
	Events      Events
	Documents   Documents
	Ready       func(ctx context.Context) error // nil when Postgres and NATS are reachable and migrated
	// Rails reports each configured production rail: "ok", or why not. A
	// rail that does not answer is reported, not a reason to be unready:
	// the rest of the service still works. Nil: no rail to report.
	Rails func(ctx context.Context) map[string]string
	// Banks lists a country's banks for GET /utils/banks: in production
	// the payout provider's; nil for the built-in list.
	Banks func(ctx context.Context, country string) ([]domain.Bank, error)
	// Unavailable says an error means the database could not be reached or
	// went away: such errors are 503 with Retry-After, not 500.
	Unavailable func(error) bool
	Registry    *prometheus.Registry
}

// New returns the API server.
func New(cfg Config, d Deps) *Server {
	if cfg.Issuer == "" {
		cfg.Issuer = "ledger"
	}
	if cfg.MaxBufferedBytes <= 0 {
		cfg.MaxBufferedBytes = DefaultMaxBufferedBytes
	}
	s := &Server{cfg: cfg, log: d.Log, credentials: d.Credentials, keys: d.Keys, idempotency: d.Idempotency,
		users: d.Users, merchants: d.Merchants, payments: d.Payments, sandbox: d.Sandbox, ledger: d.Ledger, events: d.Events, documents: d.Documents, ready: d.Ready, rails: d.Rails, banks: d.Banks, unavailable: d.Unavailable, metrics: newHTTPMetrics(d.Registry), gatherer: d.Registry, now: time.Now,
		apiKeyLimits: newLimiters(cfg.APIKeyRate), tokenIPLimits: newLimiters(cfg.TokenIPRate),
		held: semaphore.NewWeighted(cfg.MaxBufferedBytes)}
	s.presigner = NewPresigner(d.Keys, cfg.PublicURL, func() time.Time { return s.now() })
	s.router = s.routes()
	s.handler = noSniff(s.paceBodies(s.router))
	return s
}

// ServeHTTP makes the Server an http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }
