package workers

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/workers/rails/lightning"
	"github.com/ledger/ledger/workers/rails/lightning/lndharness"
	"github.com/ledger/ledger/workers/rails/lightning/lndtest"
	"github.com/ledger/ledger/workers/rails/payout"
)

// onramp appends a deposited bank-funded payment of 21,000 sats to the
// Lightning recipient lnurl.
func (e env) onramp(t *testing.T, lnurl string) uuid.UUID {
	t.Helper()
	m := domain.Merchant{ID: uuid.New(), Name: "Alice", Country: domain.CountryBTC, Currency: "BTC",
		PayoutMethod: domain.PayoutLightning, LNURL: lnurl}
	o, err := domain.ValidatePaymentRequest(domain.PaymentRequest{MerchantID: m.ID.String(), Amount: json.RawMessage("21000"),
		FromCountry: "Europe"}, true)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := domain.PlanPayment(o, m, domain.User{}, domain.DefaultValidity, time.Now(), time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	q, err := domain.QuotePayment(domain.QuoteInput{FromCurrency: "EUR", DestinationCurrency: "BTC", Amount: 21000,
		Prices: domain.BTCPrices{"EUR": decimal.NewFromInt(87_000)}})
	if err != nil {
		t.Fatal(err)
	}
	id := uuid.Must(uuid.NewV7())
	ref := paymentRef(e.tenant, id)
	_, err = e.payments.ExecutePayment(context.Background(), ref, domain.Metadata{}, func(p domain.Payment) ([]domain.Event, error) {
		return domain.DecideCreatePayment(p, domain.CreatePayment{PaymentID: id, UserID: uuid.New(), Plan: plan, Quote: q,
			Funding: domain.PaymentFunding{Collection: domain.CollectionAccount{Name: "Ledger EU", Number: "DE89"}}, Now: time.Now()})
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.payments.ExecutePayment(context.Background(), ref, domain.Metadata{}, func(p domain.Payment) ([]domain.Event, error) {
		return domain.DecideDeposit(p, domain.RecordDeposit{Amount: p.Outstanding(), Now: time.Now()})
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestLightningPayoutThroughTheLifecycle: the lifecycle pays a Lightning
// recipient through the production rail (fake LND and LNURL service) while
// the process "dies" twice right after the rail answered: the payment
// succeeds once, and only one invoice's payment hash is ever sent.
//
// How many invoices are asked for, and how often the stored one is sent,
// depends on timing: when the converting call's payout outlasts
// PayoutGrace (a loaded CI machine), the transferring message's takeover
// runs beside it, resolves an invoice of its own that is never stored,
// and sends the stored one again, which LND refuses as already paid.
func TestLightningPayoutThroughTheLifecycle(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	fake := lndtest.NewNode(t)
	payee := lndtest.NewPayee(t, fake)
	rail := payout.NewLightning(e.pool, &lightning.LNURLPay{AllowHTTP: true}, fake.LND(bytes.Repeat([]byte{9}, 32)),
		payout.FeeLimit{Sats: 10})
	id := e.onramp(t, payee.LNURL())
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		done <- e.workers(&crashingRail{rail: payout.ByRail{domain.PayoutLightning: rail}, crashes: 2}).Run(ctx)
	}()
	defer func() { stop(); <-done }()
	p := e.waitStatus(t, id, domain.StatusSuccess)
	if fake.Payments() != 1 || fake.Hashes() != 1 || fake.Sends() < 1 || payee.Invoices() < 1 || len(p.StatusLogs) != 4 {
		t.Fatalf("got %d payments of %d hashes in %d sends of %d invoices, status logs %+v; want 1 payment of 1 hash and 4 logs",
			fake.Payments(), fake.Hashes(), fake.Sends(), payee.Invoices(), p.StatusLogs)
	}
}

// TestLightningPayoutAgainstRealLND: as TestLightningPayoutThroughTheLifecycle,
// with the service's real lnd node paying, through LNURL-pay, invoices the
// peer's node makes: the process "dies" twice right after the rail
// answered, and the peer is paid once.
func TestLightningPayoutAgainstRealLND(t *testing.T) {
	net := lndharness.Start(t)
	e := newEnv(t)
	rail := payout.NewLightning(e.pool, &lightning.LNURLPay{AllowHTTP: true}, net.Service.LND(bytes.Repeat([]byte{9}, 32)),
		payout.FeeLimit{Sats: 10})
	id := e.onramp(t, net.Peer.LNURLPayee())
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		done <- e.workers(&crashingRail{rail: payout.ByRail{domain.PayoutLightning: rail}, crashes: 2}).Run(ctx)
	}()
	defer func() { stop(); <-done }()
	p := e.waitStatus(t, id, domain.StatusSuccess)
	if len(p.StatusLogs) != 4 {
		t.Fatalf("status logs %+v, want 4", p.StatusLogs)
	}
	paid := net.Peer.PayeeInvoicesPaid()
	if len(paid) != 1 || paid[0] != 21_000 {
		t.Fatalf("the peer's settled invoices from the payout: %v sats, want one of 21000", paid)
	}
}
