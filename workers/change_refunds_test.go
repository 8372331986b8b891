package workers

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/workers/rails/payout"
)

// momoDeposited appends a payment of 1500 ZAR to a South African bank
// merchant with a 5% buffer, paid by a Kenyan momo push from payerPhone:
// its change is owed to that phone once it is paid out.
func (e env) momoDeposited(t *testing.T, payerPhone string) uuid.UUID {
	t.Helper()
	id := uuid.Must(uuid.NewV7())
	m := domain.Merchant{ID: uuid.New(), Name: "Shop", Country: domain.CountrySouthAfrica, Currency: "ZAR",
		PayoutMethod: domain.PayoutBank, BankName: "Nedbank", AccountNumber: "1234567890"}
	o, err := domain.ValidatePaymentRequest(domain.PaymentRequest{MerchantID: m.ID.String(), Amount: json.RawMessage("1500"),
		Reference: "r", FromCountry: "Kenya", BufferRate: json.RawMessage("0.05")}, true)
	if err != nil {
		t.Fatal(err)
	}
	account := uuid.New()
	payer := domain.User{MomoAccounts: []domain.MomoAccount{{ID: account, PhoneNumber: payerPhone}}, DefaultMomoAccountID: &account}
	plan, err := domain.PlanPayment(o, m, payer, domain.DefaultValidity, time.Now(), time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	prices, _ := fixedPrices{}.BTCPrices(context.Background())
	q, err := domain.QuotePayment(domain.QuoteInput{FromCurrency: "KES", DestinationCurrency: "ZAR", Amount: 1500,
		BufferRate: *o.BufferRate, Prices: prices})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.payments.ExecutePayment(context.Background(), paymentRef(e.tenant, id), domain.Metadata{},
		func(p domain.Payment) ([]domain.Event, error) {
			return domain.DecideCreatePayment(p, domain.CreatePayment{PaymentID: id, UserID: uuid.New(), Plan: plan, Quote: q,
				Funding: domain.PaymentFunding{PayerMomoPhone: payerPhone}, Now: time.Now()})
		})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.payments.ExecutePayment(context.Background(), paymentRef(e.tenant, id), domain.Metadata{},
		func(p domain.Payment) ([]domain.Event, error) {
			return domain.DecideDeposit(p, domain.RecordDeposit{Amount: p.Outstanding(), Now: time.Now(), InvoiceSettled: true,
				Payer: domain.MomoPayer(payerPhone)})
		})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// waitChange waits for the payment's change refund to reach status.
func (e env) waitChange(t *testing.T, id uuid.UUID, status string) domain.PaymentSnapshot {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		p, err := e.payments.Payment(context.Background(), e.tenant, id)
		if err == nil && p.ChangeRefundStatus == status {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("payment %s: change refund %q, want %s", id, p.ChangeRefundStatus, status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// eventCount counts a payment's events of type.
func (e env) eventCount(t *testing.T, id uuid.UUID, eventType string) int {
	t.Helper()
	var n int
	if err := e.pool.QueryRow(context.Background(), `SELECT count(*) FROM events WHERE stream_id = $1 AND type = $2`,
		id, eventType).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestChangeRefundOnceThroughCrashesAndDuplicates: two processes share the
// change refund durable; the first two refund calls "die" right after the
// rail paid (the result unrecorded, the message redelivered), and every
// success message comes a second time. The change is paid once, to the
// phone the push was paid from, under its own key, and recorded once.
func TestChangeRefundOnceThroughCrashesAndDuplicates(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rail := &crashingRail{rail: payout.NewSandbox(e.pool, 0), crashes: 2, refundsOnly: true}
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := e.workers(rail)
			w.cfg.RefundRails = func(rail, currency string) bool { return rail == domain.PayoutMomo && currency == "KES" }
			_ = w.Run(ctx)
		}()
	}
	defer func() { stop(); wg.Wait() }()
	var ids []uuid.UUID
	for range 5 {
		ids = append(ids, e.momoDeposited(t, "+254712345678"))
	}
	for _, id := range ids {
		e.waitStatus(t, id, domain.StatusSuccess)
		subject := e.stream.SubjectPrefix + "." + e.tenant.String() + ".payment." + id.String() + ".success"
		if _, err := e.js.Publish(context.Background(), subject, []byte("{}"), jetstream.WithMsgID(uuid.NewString())); err != nil {
			t.Fatal(err)
		}
	}
	sandbox := payout.NewSandbox(e.pool, 0)
	for _, id := range ids {
		p := e.waitChange(t, id, domain.ChangeRefunded)
		refunds, err := sandbox.Refunds(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if len(refunds) != 1 || refunds[0].IdempotencyKey != "change-"+id.String() || refunds[0].Rail != "MOMO" ||
			refunds[0].Currency != "KES" || !refunds[0].Amount.Equal(p.ChangeOwed()) || !p.ChangeOwed().IsPositive() {
			t.Fatalf("payment %s: got refunds %+v, want one MOMO refund of KES %s keyed change-<id>", id, refunds, p.ChangeOwed())
		}
		if payouts, _ := e.payoutBooks(t, id); payouts != 1 {
			t.Errorf("payment %s: %d payouts, want 1 (the refund is not one)", id, payouts)
		}
		sent, refunded := e.eventCount(t, id, "payment.change_refund_sent"), e.eventCount(t, id, "payment.change_refunded")
		if sent != 1 || refunded != 1 || p.ChangeRefund.PayoutID != refunds[0].ID.String() {
			t.Errorf("payment %s: %d sent, %d refunded events, refund %+v; want one each, the rail's id", id, sent, refunded, p.ChangeRefund)
		}
	}
	rail.mu.Lock()
	defer rail.mu.Unlock()
	if rail.crashes != 0 {
		t.Errorf("%d crashes left, want both spent on refund calls", rail.crashes)
	}
}

// TestChangeRefundWithoutARailIsQueued: a payer no configured rail pays
// (here: no rail at all) is queued for an operator, and nothing is sent.
func TestChangeRefundWithoutARailIsQueued(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- e.workers(payout.NewSandbox(e.pool, 0)).Run(ctx) }()
	defer func() { stop(); <-done }()
	id := e.momoDeposited(t, "+254712345678")
	p := e.waitChange(t, id, domain.ChangeQueued)
	refunds, err := payout.NewSandbox(e.pool, 0).Refunds(context.Background(), id)
	if err != nil || len(refunds) != 0 || p.ChangeRefund.Reason != "no payout rail pays MOMO in KES" {
		t.Fatalf("got refunds %+v (%v), reason %q; want none sent, queued for want of a rail", refunds, err, p.ChangeRefund.Reason)
	}
}

// A success message of a payment this process settled with no change is
// acked without reading the payment; any other is read. (A canceled
// context makes the read, and only the read, fail.)
func TestChangeRefundSkipsPaymentsSettledHereWithoutChange(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	w := e.workers(payout.NewSandbox(e.pool, 0))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	settledHere, other := uuid.New(), uuid.New()
	w.settledOwingNoChange.add(settledHere)
	subject := func(id uuid.UUID) string {
		return e.stream.SubjectPrefix + "." + e.tenant.String() + ".payment." + id.String() + ".success"
	}
	if err := w.handleChangeRefund(ctx, subject(settledHere)); err != nil {
		t.Errorf("settled here without change: got %v, want acked without a read", err)
	}
	if err := w.handleChangeRefund(ctx, subject(other)); err == nil {
		t.Error("settled elsewhere: got no error from a canceled read, want the payment read")
	}
}
