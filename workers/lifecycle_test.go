package workers

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore"
	"github.com/ledger/ledger/eventstore/testenv"
	"github.com/ledger/ledger/projections"
	"github.com/ledger/ledger/workers/rails/payout"
	"github.com/ledger/ledger/workers/usecase"
)

// payments is the event store, read model and delivery log as ledgerd
// plugs them in.
type payments struct {
	*projections.Reader
	*projections.DeliveryLog
	store *eventstore.Store
}

func (p payments) ExecutePayment(ctx context.Context, ref domain.StreamRef, meta domain.Metadata,
	decide func(domain.Payment) ([]domain.Event, error)) (domain.PaymentSnapshot, error) {
	snap, err := eventstore.ExecuteSnapshot(ctx, p.store, ref, meta, domain.ApplyPayment, decide)
	return domain.PaymentSnapshot{Payment: snap.State, Version: snap.Version}, err
}

func (p payments) ExecutePaymentFrom(ctx context.Context, ref domain.StreamRef, read domain.PaymentSnapshot, meta domain.Metadata,
	decide func(domain.Payment) ([]domain.Event, error)) (domain.PaymentSnapshot, error) {
	load := func(ctx context.Context) (eventstore.Snapshot[domain.Payment], error) {
		if known := read; known.Version > 0 {
			read = domain.PaymentSnapshot{}
			return eventstore.Snapshot[domain.Payment]{State: known.Payment, Version: known.Version, UpdatedAt: known.UpdatedAt}, nil
		}
		return eventstore.FoldSnapshot(ctx, p.store, ref, domain.ApplyPayment)
	}
	snap, err := eventstore.ExecuteFrom(ctx, p.store, ref, meta, load, domain.ApplyPayment, decide)
	return domain.PaymentSnapshot{Payment: snap.State, Version: snap.Version}, err
}

func (p payments) RecordRailFunds(ctx context.Context, f domain.RailFunds, meta domain.Metadata) (*uuid.UUID, error) {
	return usecase.New(usecase.Config{}, p.store, p.Reader, usecase.Rails{}).RecordRailFunds(ctx, f, meta)
}

func (p payments) ExecuteUnmatched(ctx context.Context, id uuid.UUID, meta domain.Metadata,
	decide func(domain.UnmatchedFunds) ([]domain.Event, error)) (domain.UnmatchedFunds, error) {
	return usecase.New(usecase.Config{}, p.store, p.Reader, usecase.Rails{}).ExecuteUnmatched(ctx, id, meta, decide)
}

// fixedPrices is a price feed of every currency the tests pay in or out
// (a conversion prices the deposit's currency too, for the change).
type fixedPrices struct{}

func (fixedPrices) BTCPrices(context.Context) (domain.BTCPrices, error) {
	return domain.BTCPrices{"ZAR": decimal.NewFromInt(1_800_000), "EUR": decimal.NewFromInt(87_000), "KES": decimal.NewFromInt(12_900_000)}, nil
}

// crashingRail calls the real sandbox rail and then, while crashes remain,
// fails as a process would that died right after the rail answered: the
// payout happened, its result was never recorded. With refundsOnly, only
// change refunds' calls crash.
type crashingRail struct {
	rail        payout.Rail
	mu          sync.Mutex
	crashes     int
	refundsOnly bool
}

var errCrash = errors.New("simulated crash after the rail call")

func (r *crashingRail) Payout(ctx context.Context, req payout.Request) (payout.Outcome, error) {
	out, err := r.rail.Payout(ctx, req)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err == nil && r.crashes > 0 && (req.Refund || !r.refundsOnly) {
		r.crashes--
		return payout.Outcome{}, errCrash
	}
	return out, err
}

type env struct {
	pool     *pgxpool.Pool
	store    *eventstore.Store
	payments payments
	stream   testenv.Stream
	js       jetstream.JetStream
	tenant   uuid.UUID
}

func newEnv(t *testing.T) env {
	t.Helper()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, testenv.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := eventstore.Migrate(ctx, pool, eventstore.Migrations,
		eventstore.MigrationSet{Component: "projections", FS: projections.Migrations},
		eventstore.MigrationSet{Component: "sandbox-payouts", FS: payout.Migrations}); err != nil {
		t.Fatal(err)
	}
	js := testenv.JetStream(t)
	e := env{pool: pool, store: eventstore.New(pool, projections.Projector{}, nil), stream: testenv.NewStream(t), js: js,
		tenant: uuid.New()}
	e.payments = payments{Reader: projections.NewReader(pool), DeliveryLog: projections.NewDeliveryLog(pool), store: e.store}
	relay := eventstore.NewRelay(pool, js, eventstore.RelayConfig{Stream: e.stream.Name, SubjectPrefix: e.stream.SubjectPrefix},
		slog.New(slog.DiscardHandler), nil)
	rctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { relay.Run(rctx); close(done) }()
	t.Cleanup(func() { stop(); <-done })
	return e
}

// deposited appends a funded Lightning payment of 1500 ZAR.
func (e env) deposited(t *testing.T) uuid.UUID {
	t.Helper()
	return e.depositedOf(t, 1500)
}

// depositedOf appends a funded Lightning payment of zar ZAR.
func (e env) depositedOf(t *testing.T, zar int64) uuid.UUID {
	t.Helper()
	return e.depositedWith(t, zar, "")
}

// depositedWith is depositedOf with status webhooks sent to webhookURL
// ("": none): payment.created's and payment.deposited's deliveries pending.
func (e env) depositedWith(t *testing.T, zar int64, webhookURL string) uuid.UUID {
	t.Helper()
	id := uuid.Must(uuid.NewV7())
	e.createdWith(t, id, zar, webhookURL, func(sats int64) domain.LightningInvoice {
		return domain.LightningInvoice{PaymentRequest: "lnbcrt1", AmountSats: sats}
	})
	_, err := e.payments.ExecutePayment(context.Background(), paymentRef(e.tenant, id), domain.Metadata{},
		func(p domain.Payment) ([]domain.Event, error) {
			return domain.DecideDeposit(p, domain.RecordDeposit{Amount: p.Outstanding(), Now: time.Now()})
		})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// created appends Lightning payment id of 1500 ZAR, funded by the invoice
// that invoice makes for the sats due.
func (e env) created(t *testing.T, id uuid.UUID, invoice func(sats int64) domain.LightningInvoice) domain.PaymentSnapshot {
	t.Helper()
	return e.createdOf(t, id, 1500, invoice)
}

// createdOf is created for an amount of zar ZAR.
func (e env) createdOf(t *testing.T, id uuid.UUID, zar int64, invoice func(sats int64) domain.LightningInvoice) domain.PaymentSnapshot {
	t.Helper()
	return e.createdWith(t, id, zar, "", invoice)
}

// createdWith is createdOf with status webhooks sent to webhookURL ("": none).
func (e env) createdWith(t *testing.T, id uuid.UUID, zar int64, webhookURL string, invoice func(sats int64) domain.LightningInvoice) domain.PaymentSnapshot {
	t.Helper()
	m := domain.Merchant{ID: uuid.New(), Name: "Shop", Country: domain.CountrySouthAfrica, Currency: "ZAR",
		PayoutMethod: domain.PayoutBank, BankName: "Nedbank", AccountNumber: "1234567890"}
	o, err := domain.ValidatePaymentRequest(domain.PaymentRequest{MerchantID: m.ID.String(),
		Amount: json.RawMessage(strconv.FormatInt(zar, 10)), Reference: "r", WebhookURL: webhookURL}, true)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := domain.PlanPayment(o, m, domain.User{}, domain.DefaultValidity, time.Now(), time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	q, err := domain.QuotePayment(domain.QuoteInput{FromCurrency: "BTC", DestinationCurrency: "ZAR", Amount: zar,
		Prices: domain.BTCPrices{"ZAR": decimal.NewFromInt(1_800_000)}})
	if err != nil {
		t.Fatal(err)
	}
	inv := invoice(q.AmountSats)
	p, err := e.payments.ExecutePayment(context.Background(), paymentRef(e.tenant, id), domain.Metadata{},
		func(p domain.Payment) ([]domain.Event, error) {
			return domain.DecideCreatePayment(p, domain.CreatePayment{PaymentID: id, UserID: uuid.New(), Plan: plan, Quote: q,
				Funding: domain.PaymentFunding{Invoice: &inv}, Now: time.Now()})
		})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (e env) workers(rail payout.Rail) *Workers {
	return New(Config{Stream: e.stream.Name, SubjectPrefix: e.stream.SubjectPrefix, ExpiryPoll: time.Hour,
		PayoutGrace:   300 * time.Millisecond,
		RenderPayment: func(domain.PaymentSnapshot) ([]byte, error) { return []byte("{}"), nil }},
		e.pool, e.js, e.payments, fixedPrices{}, rail, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
}

// payment reads the payment as it is now: after a step that ran to its end
// in the test's goroutine (a sweep), its status is decided, not awaited.
func (e env) payment(t *testing.T, id uuid.UUID) domain.PaymentSnapshot {
	t.Helper()
	p, err := e.payments.Payment(context.Background(), e.tenant, id)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (e env) waitStatus(t *testing.T, id uuid.UUID, status string) domain.PaymentSnapshot {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		p, err := e.payments.Payment(context.Background(), e.tenant, id)
		if err == nil && p.Status == status {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("payment %s: got %s, want %s", id, p.Status, status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (e env) payoutBooks(t *testing.T, id uuid.UUID) (payouts int, calls int64) {
	t.Helper()
	items, calls, err := payout.NewSandbox(e.pool, 0).Payouts(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return len(items), calls
}

// TestPayoutSurvivesCrashesAfterTheRailCall: the process "dies" twice right
// after the rail paid (the result unrecorded, the message redelivered); the
// third delivery records success. The rail was called three times and paid
// once.
func TestPayoutSurvivesCrashesAfterTheRailCall(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.deposited(t)
	rail := &crashingRail{rail: payout.NewSandbox(e.pool, 0), crashes: 2}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- e.workers(rail).Run(ctx) }()
	defer func() { stop(); <-done }()
	p := e.waitStatus(t, id, domain.StatusSuccess)
	if payouts, calls := e.payoutBooks(t, id); payouts != 1 || calls != 3 {
		t.Fatalf("sandbox rail: %d payouts after %d calls, want 1 after 3", payouts, calls)
	}
	if len(p.StatusLogs) != 4 {
		t.Fatalf("status logs: got %+v", p.StatusLogs)
	}
}

// TestPayoutOnceWithTwoProcessesAndDuplicates: two worker sets (two
// processes) share the durable consumer, and every lifecycle message is
// published a second time under another message id, as a redelivery would
// bring it: the payment is paid out once and succeeds once.
func TestPayoutOnceWithTwoProcessesAndDuplicates(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() { defer wg.Done(); e.workers(payout.NewSandbox(e.pool, 0)).Run(ctx) }()
	}
	defer func() { stop(); wg.Wait() }()
	var ids []uuid.UUID
	for range 20 {
		ids = append(ids, e.deposited(t))
	}
	for _, id := range ids {
		e.waitStatus(t, id, domain.StatusSuccess)
		for _, event := range []string{"deposited", "transferring"} {
			subject := e.stream.SubjectPrefix + "." + e.tenant.String() + ".payment." + id.String() + "." + event
			if _, err := e.js.Publish(context.Background(), subject, []byte("{}"), jetstream.WithMsgID(uuid.NewString())); err != nil {
				t.Fatal(err)
			}
		}
	}
	time.Sleep(500 * time.Millisecond) // the duplicates are handled
	for _, id := range ids {
		p := e.waitStatus(t, id, domain.StatusSuccess)
		if payouts, _ := e.payoutBooks(t, id); payouts != 1 || len(p.StatusLogs) != 4 {
			t.Fatalf("payment %s: %d payouts, status logs %+v", id, payouts, p.StatusLogs)
		}
	}
}
