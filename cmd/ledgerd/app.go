package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/ledger/ledger/cmd/internal/embeddednats"
	"github.com/ledger/ledger/cmd/internal/natsurl"
	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore"
	"github.com/ledger/ledger/eventstore/apikeys"
	"github.com/ledger/ledger/eventstore/keys"
	"github.com/ledger/ledger/eventstore/sealing"
	"github.com/ledger/ledger/eventstore/signin"
	"github.com/ledger/ledger/httpapi"
	"github.com/ledger/ledger/httpapi/dashboard"
	"github.com/ledger/ledger/projections"
	"github.com/ledger/ledger/workers"
	"github.com/ledger/ledger/workers/poll"
	"github.com/ledger/ledger/workers/rails/camt"
	"github.com/ledger/ledger/workers/rails/ethereum"
	"github.com/ledger/ledger/workers/rails/mpesa"
	"github.com/ledger/ledger/workers/rails/payout"
	"github.com/ledger/ledger/workers/rails/paystack"
	"github.com/ledger/ledger/workers/reconcile"
	"github.com/ledger/ledger/workers/usecase"
)

// migrations are every component's schema, in the order they are applied.
var migrations = []eventstore.MigrationSet{
	eventstore.Migrations,
	{Component: "projections", FS: projections.Migrations},
	{Component: "sandbox-payouts", FS: payout.Migrations},
	{Component: "paystack-payouts", FS: paystack.Migrations},
	{Component: "mpesa", FS: mpesa.Migrations},
	{Component: "usdt", FS: ethereum.Migrations},
	{Component: "reconciliation", FS: reconcile.Migrations},
}

// app is a wired ledgerd: its connections and the parts that run.
type app struct {
	cfg       config
	log       *slog.Logger
	pool      *pgxpool.Pool
	ns        *server.Server // nil when NATS_URL is set
	natsToken string         // the embedded server's client token
	nc        *nats.Conn
	store     *eventstore.Store
	relay     *eventstore.Relay
	idem      *eventstore.Idempotency
	keys      *keys.SigningKeys
	api       *httpapi.Server
	dash      *dashboard.Dashboard
	handler   http.Handler // the API, with the partner dashboard under /dashboard
	workers   *workers.Workers
	metrics   *metricsServer      // nil unless LEDGER_METRICS_ADDR is set
	requests  *reconcile.Requests // the reconciliations operators ask for
	reconcile *reconcile.Schedule // nil unless LEDGER_RECONCILE_AT is set
}

// newApp connects to Postgres (creating and migrating the database) and to
// NATS (starting the embedded server when NATS_URL is unset) and builds the parts.
func newApp(ctx context.Context, cfg config, log *slog.Logger) (a *app, err error) {
	a = &app{cfg: cfg, log: log}
	opened := a // a failed start returns a nil *app, and still closes what it opened
	defer func() {
		if err != nil {
			opened.close()
		}
	}()
	if err := eventstore.EnsureDatabase(ctx, cfg.DatabaseURL); err != nil {
		return nil, err
	}
	poolCfg, err := pgxpool.ParseConfig(cfg.DatabaseURL)
	if err != nil {
		return nil, fmt.Errorf("DATABASE_URL: %w", err)
	}
	poolCfg.MaxConns = int32(cfg.DBMaxConns)
	eventstore.NativeUUIDs(poolCfg)
	if a.pool, err = pgxpool.NewWithConfig(ctx, poolCfg); err != nil {
		return nil, fmt.Errorf("open Postgres: %w", err)
	}
	if err := eventstore.Migrate(ctx, a.pool, migrations...); err != nil {
		return nil, err
	}
	master, err := masterKeys(cfg, log)
	if err != nil {
		return nil, err
	}
	if err := keys.WrapStoredKeys(ctx, a.pool, master); err != nil {
		return nil, err
	}
	if err := keys.EnsureKey(ctx, a.pool, master, cfg.tokenLifetimes()); err != nil {
		return nil, err
	}

	natsURL := cfg.NATSURL
	var natsAuth []nats.Option
	if natsURL == "" {
		if a.ns, a.natsToken, err = startEmbeddedNATS(cfg.EmbeddedNATSAddr, cfg.DataDir); err != nil {
			return nil, err
		}
		natsURL, natsAuth = a.ns.ClientURL(), []nats.Option{nats.Token(a.natsToken)}
	}
	if a.nc, err = connectNATS(natsURL, natsAuth...); err != nil {
		return nil, err
	}
	js, err := jetstream.New(a.nc)
	if err != nil {
		return nil, fmt.Errorf("JetStream: %w", err)
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	a.relay = eventstore.NewRelay(a.pool, js, eventstore.RelayConfig{Stream: cfg.NATSStream,
		SubjectPrefix: cfg.NATSSubjectPrefix, Replicas: cfg.NATSReplicas}, log, reg)
	a.store = eventstore.New(a.pool, projections.Projector{}, reg)
	sealer := sealing.NewSealer(a.pool, master) // webhookSecrets, dashboard password hashes, recorded token responses
	a.idem = eventstore.NewIdempotency(a.store, sealer)
	// The relay of this process sequences its appends as soon as they
	// commit, instead of at its next poll.
	a.store.OnCommit(a.relay.Wake)
	reader := projections.NewReader(a.pool)
	a.keys = keys.NewSigningKeys(a.pool, master)
	signing := signingKeys{a.keys}
	if err := checkSigningKey(ctx, cfg, a.keys, log); err != nil {
		return nil, err
	}
	rails, err := newRails(cfg)
	if err != nil {
		return nil, err
	}
	sandbox := cfg.Mode == "sandbox"
	var rail payout.Rail
	rail, providers := rails.payoutRail(cfg, a.pool, railOutcomes{a}, log, reg)
	providers.usdt = rails.usdtWatcher(cfg, a.pool, railOutcomes{a}, log, reg)
	var usdt workers.USDT // nil unless USDT is configured, as prompts below
	if providers.usdt != nil {
		usdt = providers.usdt
	}
	var sandboxBooks httpapi.SandboxPayouts
	if sandbox {
		s := payout.NewSandbox(a.pool, cfg.SandboxPayoutDelay)
		rail, sandboxBooks, rails.SandboxDeposits = s, sandboxPayouts{s}, s
	}
	ledger := usecase.New(usecase.Config{Validity: cfg.Validity, OTCFeeRate: cfg.OTCFeeRate, Location: johannesburg,
		InsecureWebhooks: sandbox, DocumentQuota: cfg.TenantDocumentQuota, PrivateWebhooks: cfg.WebhookAllowPrivate, SealSecret: sealer.Seal,
		Appended: func(ref domain.StreamRef, delivery, ready bool) { a.workers.Appended(ref, delivery, ready) }}, // a.workers is set below, before anything is served
		a.store, reader, rails.Rails)
	access := tenantAccess{Ledger: ledger, Uses: apikeys.NewUses(a.pool), Throttle: signin.NewThrottle(a.pool)}
	var prompts workers.Prompts // nil unless M-Pesa is configured: a nil *mpesa.Rail must not become a non-nil interface
	if providers.momo != nil {
		prompts = providers.momo
	}
	a.workers = workers.New(workers.Config{Stream: cfg.NATSStream, SubjectPrefix: cfg.NATSSubjectPrefix,
		OTCFeeRate: cfg.OTCFeeRate, ExpiryPoll: cfg.ExpiryPoll, StalledAfter: cfg.StalledAfter, WebhookSchedule: cfg.WebhookRetry,
		WebhookPrivate: cfg.WebhookAllowPrivate, WebhookSends: cfg.WebhookSends, RenderPayment: httpapi.PaymentJSON, OpenSecret: openWebhookSecret(sealer),
		Invoices: rails.invoices, InvoicePoll: cfg.LNDInvoicePoll, Prompts: prompts, RefundRails: providers.refundRails(sandbox),
		USDT: usdt, USDTPoll: cfg.USDT.Poll},
		a.pool, js, ledger, rails.Prices, rail, log, reg)
	a.api = httpapi.New(httpapi.Config{TenantTokenTTL: cfg.TenantTokenTTL, UserTokenTTL: cfg.UserTokenTTL,
		PublicURL: cfg.PublicURL, Sandbox: sandbox, APIKeyRate: cfg.RateLimit, TokenIPRate: cfg.TokenRateLimit,
		BodyTimeout: cfg.BodyTimeout, BodyMinRate: cfg.BodyMinRate, WriteTimeout: writeTimeout, MetricsElsewhere: cfg.MetricsAddr != "",
		MaxBufferedBytes: cfg.MaxBufferedBytes},
		httpapi.Deps{Log: log, Credentials: access, Keys: signing, Idempotency: a.idem,
			Users: ledger, Merchants: ledger, Payments: ledger, Sandbox: sandboxBooks, Ledger: reader, Events: a.store, Documents: ledger, Ready: a.ready,
			Rails: railsReady(providers), Banks: rails.Banks, Unavailable: eventstore.Unavailable, Registry: reg})
	reg.MustRegister(newBreakMetrics(reader))
	a.requests, a.reconcile = newReconciliation(cfg, rails.statementSources(cfg, a.pool), a.pool, ledger, log)
	if cfg.MetricsAddr != "" {
		if a.metrics, err = listenMetrics(cfg.MetricsAddr, reg, log); err != nil {
			return nil, err
		}
	}
	a.dash = a.newDashboard(reader, ledger, access, sealer, keys.NewServerKeys(a.pool, master), httpapi.NewPresigner(signing, cfg.PublicURL, nil))
	a.handler = withDashboard(a.api, a.api.PaceBodies(a.dash)) // the API paces its own
	if providers.bank != nil {
		a.handler = withRoute(a.handler, paystack.WebhookPath, a.api.PaceBodies(providers.bank))
	}
	if providers.momo != nil {
		a.handler = withPrefix(a.handler, mpesa.CallbackPrefix, a.api.PaceBodies(providers.momo))
	}
	token, err := cfg.operatorToken()
	if err != nil {
		return nil, err
	}
	if token != "" {
		importCamt := func(ctx context.Context, r io.Reader) (any, error) {
			return ledger.ImportCamt(ctx, r, domain.Metadata{Actor: "operator:api"})
		}
		a.handler = withRoute(a.handler, camt.ImportPath, a.api.PaceBodies(camt.NewHandler(token, importCamt, log)))
	}
	return a, nil
}

// ready is nil when Postgres and NATS answer and the schema is current. Its
// errors name the dependency only; causes go to the log.
func (a *app) ready(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := a.pool.Ping(ctx); err != nil {
		a.log.Warn("readiness: postgres", "err", err)
		return errors.New("postgres is unreachable")
	}
	if pending, err := eventstore.Pending(ctx, a.pool, migrations...); err != nil || pending {
		return errors.New("database migrations are not applied")
	}
	if a.nc.Status() != nats.CONNECTED {
		return errors.New("nats is unreachable")
	}
	return nil
}

// railsReady reports the configured production rails for GET /readyz.
func railsReady(p providers) func(context.Context) map[string]string {
	checks := map[string]func(context.Context) error{}
	if p.bank != nil {
		checks["paystack"] = p.bank.Ready
	}
	if p.momo != nil {
		checks["mpesa"] = p.momo.Ready
	}
	if p.usdt != nil {
		checks["ethereum"] = p.usdt.Ready
	}
	if len(checks) == 0 {
		return nil
	}
	return func(ctx context.Context) map[string]string {
		states := make(map[string]string, len(checks))
		for name, ready := range checks {
			states[name] = "ok"
			if err := ready(ctx); err != nil {
				states[name] = err.Error()
			}
		}
		return states
	}
}

// withRoute serves path with h, everything else with next: a provider's
// callback, authenticated by its own signature rather than the API's tokens.
func withRoute(next http.Handler, path string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == path {
			h.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// withPrefix serves the paths under prefix with h, everything else with
// next: a provider's callbacks, each authenticated by its own URL's token.
func withPrefix(next http.Handler, prefix string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, prefix) {
			h.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// writeTimeout bounds writing a response: from the request's headers, or
// from its body's deadline when it has a body.
const writeTimeout = 2 * time.Minute

// serve runs the HTTP server, the relay and housekeeping until ctx ends or
// one of them fails, then drains in-flight requests and stops the rest.
func (a *app) serve(ctx context.Context, ln net.Listener) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// No ReadTimeout: every request's body, API or dashboard, is paced
	// (LEDGER_BODY_TIMEOUT and LEDGER_BODY_MIN_RATE), which one fixed
	// timeout cannot do for both small JSON bodies and 10 MiB uploads.
	// Headers have ReadHeaderTimeout, idle keep-alive connections IdleTimeout.
	srv := &http.Server{Handler: a.handler, ReadHeaderTimeout: a.cfg.ReadHeaderTimeout,
		WriteTimeout: writeTimeout, IdleTimeout: 2 * time.Minute,
		ErrorLog: slog.NewLogLogger(a.log.Handler(), slog.LevelWarn)}
	srv.RegisterOnShutdown(a.dash.Close)

	errs := make(chan error, 3)
	go func() {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			errs <- fmt.Errorf("http server: %w", err)
		}
	}()
	if a.metrics != nil {
		go a.metrics.serve(errs)
	}
	background, stopBackground := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{}, 5)
	go func() { a.relay.Run(background); done <- struct{}{} }()
	go func() { a.requests.Serve(background); done <- struct{}{} }()
	go func() {
		if a.reconcile != nil {
			a.reconcile.Run(background)
		}
		done <- struct{}{}
	}()
	go func() { a.purgeIdempotencyKeys(background); done <- struct{}{} }()
	go func() {
		if err := a.workers.Run(background); err != nil {
			a.log.Error("workers", "err", err)
		}
		done <- struct{}{}
	}()

	var err error
	select {
	case <-ctx.Done():
	case err = <-errs:
	}
	a.log.Info("shutting down: draining requests")
	shutdownCtx, cancelShutdown := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancelShutdown()
	if serr := srv.Shutdown(shutdownCtx); serr != nil && err == nil {
		err = fmt.Errorf("drain requests: %w", serr)
	}
	if a.metrics != nil {
		_ = a.metrics.srv.Shutdown(shutdownCtx) // a scrape cut short is taken again
	}
	stopBackground()
	for range 5 {
		<-done
	}
	a.log.Info("stopped")
	return err
}

// purgeIdempotencyKeys deletes expired Idempotency-Key records at start
// and every ten minutes. Every instance does it; the deletes are harmless
// to repeat.
func (a *app) purgeIdempotencyKeys(ctx context.Context) {
	poll.Every(ctx, 10*time.Minute, func() {
		if n, err := a.idem.Purge(ctx); err != nil && ctx.Err() == nil {
			a.log.Warn("purge idempotency keys", "err", err)
		} else if n > 0 {
			a.log.Info("purged idempotency keys", "count", n)
		}
	})
}

func (a *app) printBanner(w io.Writer, addr string) {
	fmt.Fprintf(w, "ledgerd (%s mode) listening on http://%s\n", a.cfg.Mode, addr)
	if a.ns != nil {
		fmt.Fprintf(w, "embedded NATS with JetStream on nats://%s (stream %s), token in %s: nats --server nats://%s@%s sub '%s.>'\n",
			a.cfg.EmbeddedNATSAddr, a.cfg.NATSStream, embeddednats.TokenPath(a.cfg.DataDir), a.natsToken, a.cfg.EmbeddedNATSAddr,
			a.cfg.NATSSubjectPrefix)
		fmt.Fprintf(w, "follow the events: go run ./cmd/ledgerctl events tail (same directory, or LEDGER_DATA_DIR=%s)\n", a.cfg.DataDir)
	} else {
		fmt.Fprintf(w, "NATS at %s (stream %s)\n", natsurl.Redacted(a.cfg.NATSURL), a.cfg.NATSStream)
	}
	fmt.Fprintf(w, "credentials: go run ./cmd/ledgerctl tenant create --name 'Acme' --email owner@acme.example\n")
	fmt.Fprintf(w, "then: curl -s http://%s/token -H 'Content-Type: application/json' -d '{\"apiKey\":\"...\",\"apiSecret\":\"...\"}'\n", addr)
}

// close releases the connections in reverse order of opening.
func (a *app) close() {
	if a.metrics != nil {
		_ = a.metrics.ln.Close() // already closed when serve ran
	}
	if a.nc != nil {
		a.nc.Drain()
	}
	if a.ns != nil {
		a.ns.Shutdown()
		a.ns.WaitForShutdown()
	}
	if a.pool != nil {
		a.pool.Close()
	}
}

// openWebhookSecret opens a payment's stored webhookSecret for the
// dispatcher, telling it apart a value no process can ever open.
func openWebhookSecret(sealer *sealing.Sealer) func(context.Context, string) (string, error) {
	return func(ctx context.Context, stored string) (string, error) {
		secret, err := sealer.Open(ctx, stored)
		if errors.Is(err, sealing.ErrSealed) {
			return "", fmt.Errorf("%w: %w", workers.ErrSecretUnreadable, err)
		}
		return secret, err
	}
}
