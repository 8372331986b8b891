package workers

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/shopspring/decimal"
	"golang.org/x/sync/errgroup"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/workers/rails/payout"
	"github.com/ledger/ledger/workers/rails/prices"
	"github.com/ledger/ledger/workers/webhooks"
)

// Payments is the payment aggregate as the workers use it: the read model
// (written with the events, so it is as fresh as the message being handled),
// commands through the event store, and the log of webhook delivery attempts.
type Payments interface {
	Payment(ctx context.Context, tenantID, id uuid.UUID) (domain.PaymentSnapshot, error)
	// PaymentStatus is the payment's status alone: cheaper than Payment.
	PaymentStatus(ctx context.Context, tenantID, id uuid.UUID) (string, error)
	ExecutePayment(ctx context.Context, ref domain.StreamRef, meta domain.Metadata,
		decide func(domain.Payment) ([]domain.Event, error)) (domain.PaymentSnapshot, error)
	// ExecutePaymentFrom is ExecutePayment deciding first on read (Version
	// 0: none), the payment as the caller read or wrote it; a read no
	// longer current is refused by the append and decided again on a
	// fresh one.
	ExecutePaymentFrom(ctx context.Context, ref domain.StreamRef, read domain.PaymentSnapshot, meta domain.Metadata,
		decide func(domain.Payment) ([]domain.Event, error)) (domain.PaymentSnapshot, error)
	// RecordRailFunds holds money a rail delivered that no payment took
	// as unmatched funds, once per provider reference (nil: recorded
	// before).
	RecordRailFunds(ctx context.Context, f domain.RailFunds, meta domain.Metadata) (*uuid.UUID, error)
	// ExecuteUnmatched runs a command on an unmatched item's stream.
	ExecuteUnmatched(ctx context.Context, id uuid.UUID, meta domain.Metadata,
		decide func(domain.UnmatchedFunds) ([]domain.Event, error)) (domain.UnmatchedFunds, error)
	// RecordWebhookAttempts logs attempts and moves their deliveries on,
	// in one transaction (projections.DeliveryLog); the same transaction
	// leases the next delivery, due at now, of each delivered record's
	// payment that asks for it, until leaseNext, and returns them.
	RecordWebhookAttempts(ctx context.Context, recs []domain.WebhookAttemptRecord, now, leaseNext time.Time) ([]domain.WebhookDelivery, error)
	// ClaimWebhooks and ClaimPaymentsWebhooks lease due webhook
	// deliveries, at most limit, or each payment's next, until until.
	ClaimWebhooks(ctx context.Context, now, until time.Time, limit int) ([]domain.WebhookDelivery, error)
	ClaimPaymentsWebhooks(ctx context.Context, payments []uuid.UUID, now, until time.Time) ([]domain.WebhookDelivery, error)
	// ReleaseWebhook ends this sender's lease of a delivery (the lease
	// that ends at leaseUntil) that it did not attempt, so any sender may
	// claim it at once.
	ReleaseWebhook(ctx context.Context, eventID uuid.UUID, leaseUntil time.Time) error
}

// Config holds the workers' settings.
type Config struct {
	Stream          string // the JetStream stream of the events (LEDGER)
	SubjectPrefix   string // its first subject token (ledger)
	OTCFeeRate      decimal.Decimal
	ExpiryPoll      time.Duration   // how often overdue payments are looked for
	WebhookPoll     time.Duration   // how often due webhook deliveries are looked for while there are some
	WebhookSchedule []time.Duration // waits before attempts 2, 3, ... (LEDGER_WEBHOOK_RETRY)
	WebhookTimeout  time.Duration   // per attempt (10 s)
	WebhookPrivate  bool            // allow loopback and private webhook targets (sandbox)
	WebhookSends    int             // webhook attempts in flight at once in this process (LEDGER_WEBHOOK_SENDS; 256)
	// RenderPayment writes the Payment as the API returns it: a webhook's data.
	RenderPayment func(domain.PaymentSnapshot) ([]byte, error)
	// OpenSecret returns a stored webhookSecret as the partner gave it
	// (sealing.Sealer.Open); nil takes it as stored. An error that wraps
	// ErrSecretUnreadable means it never will be: its webhooks fail.
	OpenSecret func(ctx context.Context, stored string) (string, error)
	// Invoices is the Lightning node that made the deposit invoices; nil
	// (sandbox) watches none: deposits arrive through the sandbox API.
	Invoices    Invoices
	InvoicePoll time.Duration // how often open deposit invoices are looked up (LEDGER_LND_INVOICE_POLL)
	// Prompts sends momo-funded payments' prompts (M-Pesa STK Push); nil
	// (sandbox) sends none: deposits arrive through the sandbox API.
	Prompts    Prompts
	PromptPoll time.Duration // how often payments awaiting a prompt are looked for (1 s)
	// USDT reads the chain for deposits to USDT payments' addresses
	// (ethereum.Watcher); nil (sandbox) reads none: deposits arrive
	// through the sandbox API.
	USDT     USDT
	USDTPoll time.Duration // how often it reads (LEDGER_ETH_POLL; 15 s)
	// StalledAfter is how long a payment may sit deposited or transferring
	// before the sweep runs its step itself (runStalled); StalledPoll is
	// how often it looks.
	StalledAfter time.Duration
	StalledPoll  time.Duration
	// RefundRails says which payout rails can pay a payer their change
	// back (domain.RefundRails): in sandbox mode the sandbox rail pays
	// any; in production those configured.
	RefundRails domain.RefundRails
	// PayoutGrace is how long after a payment's conversion its transferring
	// message leaves the payout to the process that converted it
	// (takeOverPayout).
	PayoutGrace time.Duration
}

// ErrSecretUnreadable is OpenSecret's answer for a stored secret that can
// never be opened (its sealing key is gone, or the value was altered).
var ErrSecretUnreadable = errors.New("workers: the webhook secret cannot be opened")

// Workers are the lifecycle consumers, the expiry timer, the webhook
// dispatcher and, with a Lightning node, the deposit invoice watcher (with
// USDT, the chain's) of one ledgerd process; several processes share the
// work.
type Workers struct {
	cfg      Config
	pool     *pgxpool.Pool
	js       jetstream.JetStream
	payments Payments
	prices   prices.Source // what conversions are priced at
	rail     payout.Rail
	log      *slog.Logger
	metrics  *metrics
	now      func() time.Time
	webhooks *webhooks.Client
	// Payments whose next step this process takes at once (Appended).
	advanceNow, webhooksNow chan domain.StreamRef
	records                 *attemptRecords  // webhook attempts' records, batched
	senders                 *sendingPayments // payments whose webhooks a goroutine here is sending
	sendSlots               sendSlots        // webhook attempts in flight here (Config.WebhookSends)
	settled                 *settledHere     // payments whose payout result this process recorded
	settledOwingNoChange    *settledHere     // of those, the successful ones with no change to pay back
	paying                  *payingHere      // payments this process converted and is paying out now
	advancing               *advancingHere   // payments whose conversion the fast path is making
	stalled                 stalledCursor    // where the stalled sweep goes on from (one goroutine: runStalled)
	stalledRefunds          stalledCursor    // where its sweep of change refunds goes on from
	expiryPage              int              // overdue payments one query reads (expiryPage; tests lower it)
	started                 time.Time        // when this process's workers were made
}

// New returns the workers.
func New(cfg Config, pool *pgxpool.Pool, js jetstream.JetStream, payments Payments, prices prices.Source, rail payout.Rail,
	log *slog.Logger, reg prometheus.Registerer) *Workers {
	if cfg.ExpiryPoll <= 0 {
		cfg.ExpiryPoll = time.Second
	}
	if cfg.WebhookPoll <= 0 {
		cfg.WebhookPoll = 20 * time.Millisecond
	}
	if cfg.InvoicePoll <= 0 {
		cfg.InvoicePoll = 2 * time.Second
	}
	if cfg.PromptPoll <= 0 {
		cfg.PromptPoll = time.Second
	}
	if cfg.USDTPoll <= 0 {
		cfg.USDTPoll = 15 * time.Second
	}
	if cfg.WebhookTimeout <= 0 {
		cfg.WebhookTimeout = 10 * time.Second
	}
	// An attempt and its record must fit in its delivery's lease (deliver).
	cfg.WebhookTimeout = min(cfg.WebhookTimeout, leaseFor-recordFor-time.Second)
	if cfg.WebhookSends <= 0 {
		cfg.WebhookSends = defaultWebhookSends
	}
	if cfg.WebhookSchedule == nil {
		cfg.WebhookSchedule = domain.WebhookRetrySchedule
	}
	if cfg.StalledAfter <= 0 {
		// Beyond the lifecycle consumers' own redeliveries (about 2.5
		// minutes in all), so the sweep only takes what it gave up on.
		cfg.StalledAfter = 5 * time.Minute
	}
	if cfg.PayoutGrace <= 0 {
		// Longer than a payout rail normally takes to answer; a crashed
		// process's messages wait as long (AckWait) anyway.
		cfg.PayoutGrace = 10 * time.Second
	}
	if cfg.StalledPoll <= 0 {
		cfg.StalledPoll = 30 * time.Second
	}
	if cfg.RefundRails == nil {
		cfg.RefundRails = func(string, string) bool { return false } // every refund waits for an operator
	}
	if cfg.OpenSecret == nil {
		cfg.OpenSecret = func(_ context.Context, stored string) (string, error) { return stored, nil }
	}
	return &Workers{cfg: cfg, pool: pool, js: js, payments: payments, prices: prices, rail: rail, log: log,
		metrics: newMetrics(reg), now: time.Now, webhooks: webhooks.NewClient(cfg.WebhookTimeout, cfg.WebhookPrivate),
		advanceNow: make(chan domain.StreamRef, nowQueue), webhooksNow: make(chan domain.StreamRef, nowQueue),
		records: newAttemptRecords(), senders: newSendingPayments(), sendSlots: make(sendSlots, cfg.WebhookSends), settled: newSettledHere(),
		settledOwingNoChange: newSettledHere(), paying: newPayingHere(),
		advancing: newAdvancingHere(),
		stalled:   stalledCursor{batch: stalledBatch}, stalledRefunds: stalledCursor{batch: stalledBatch}, expiryPage: expiryPage,
		started: time.Now()}
}

// Run runs every worker until ctx ends, then lets in-flight work finish.
func (w *Workers) Run(ctx context.Context) error {
	g, ctx := errgroup.WithContext(ctx)
	var names []string
	for _, c := range w.lifecycleConsumers() {
		names = append(names, c.name)
		g.Go(func() error { return c.run(ctx, w.js) })
	}
	g.Go(func() error { retireDurable(ctx, w.js, w.cfg.Stream, lifecycleReplaces, names, w.log); return nil })
	refunds, returns := w.changeRefundsConsumer(), w.unmatchedReturnsConsumer()
	g.Go(func() error { return refunds.run(ctx, w.js) })
	g.Go(func() error { return returns.run(ctx, w.js) })
	g.Go(func() error { return w.runExpiry(ctx) })
	g.Go(func() error { return w.runWebhooks(ctx) })
	g.Go(func() error { return w.runStalled(ctx) })
	g.Go(func() error { return w.runNow(ctx) })
	if w.cfg.Invoices != nil {
		g.Go(func() error { return w.runDeposits(ctx) })
	}
	if w.cfg.Prompts != nil {
		g.Go(func() error { return w.runPrompts(ctx) })
	}
	if w.cfg.USDT != nil {
		g.Go(func() error { return w.poll(ctx, w.cfg.USDTPoll, "usdt: poll", w.cfg.USDT.Poll) })
	}
	return g.Wait()
}

var workerMeta = domain.Metadata{Actor: "system:workers"}

func paymentRef(tenantID, id uuid.UUID) domain.StreamRef {
	return domain.StreamRef{TenantID: tenantID, Type: "payment", ID: id}
}
