package domain

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

var lifecyclePrices = BTCPrices{"ZAR": decimal.NewFromInt(1_800_000), "KES": decimal.NewFromInt(12_900_000),
	"NGN": decimal.NewFromInt(150_000_000), "GBP": decimal.NewFromInt(76_000), "EUR": decimal.NewFromInt(87_000),
	"USD": decimal.NewFromInt(100_000)}

// newPayment decides a payment of amount ZAR (Lightning) to a South African
// merchant at the lifecycle prices.
func newPayment(t *testing.T, body string, m Merchant) Payment {
	t.Helper()
	plan := planned(t, body, m)
	q, err := QuotePayment(QuoteInput{FromCurrency: plan.Order.FromCurrency, DestinationCurrency: m.Currency,
		Amount: plan.Order.Amount, BufferRate: plan.Order.BufferRateOrZero(), OTCFeeRate: decimal.RequireFromString("0.01"),
		Prices: lifecyclePrices})
	if err != nil {
		t.Fatal(err)
	}
	f := PaymentFunding{Invoice: &LightningInvoice{PaymentRequest: "lnbcrt1", AmountSats: q.AmountSats},
		Collection: CollectionAccount{Name: "n", Number: "1"}, USDTAddress: "0x", PayerMomoPhone: "+254712345678"}
	events, err := DecideCreatePayment(Payment{}, CreatePayment{PaymentID: uuid.New(), UserID: uuid.New(), Plan: plan,
		Quote: q, Funding: f, Now: businessHours})
	if err != nil {
		t.Fatal(err)
	}
	return ApplyPayment(Payment{}, events[0])
}

// step decides and applies, checking the fold's state survives its
// encoding as the payments row.
func step(t *testing.T, p Payment, events []Event, err error, want ...string) Payment {
	t.Helper()
	wantTypes(t, events, err, want...)
	for _, e := range events {
		e = roundTrip(t, e)
		if err := CheckBalanced(PostingsOf(e)); err != nil {
			t.Fatalf("%s postings %+v: %v", e.EventType(), PostingsOf(e), err)
		}
		if money := StatusOf(e) == StatusDeposited || StatusOf(e) == StatusTransferring || StatusOf(e) == StatusSuccess ||
			StatusOf(e) == StatusFailed; money && len(PostingsOf(e)) == 0 {
			t.Fatalf("%s moves money but carries no postings", e.EventType())
		}
		next := ApplyPayment(p, e)
		// The read model stores the fold's JSON and commands decide on it
		// decoded: the two must be the same payment.
		raw, _ := json.Marshal(next)
		var stored Payment
		if err := json.Unmarshal(raw, &stored); err != nil {
			t.Fatal(err)
		}
		if again, _ := json.Marshal(stored); string(again) != string(raw) {
			t.Fatalf("%s: the stored payment differs from the fold:\n%s\n%s", e.EventType(), again, raw)
		}
		p = next
	}
	return p
}

func TestPaymentLifecycleLightning(t *testing.T) {
	t.Parallel()
	p := newPayment(t, `{"MerchantID":"m","Amount":1500,"Reference":"r","BufferRate":0.05}`, testMerchant(CountrySouthAfrica, PayoutBank))
	if p.DepositCurrency != "sats" || !p.DepositDue.Equal(decimal.NewFromInt(*p.AmountSats)) {
		t.Fatalf("deposit due: got %s %s, want the invoice's %d sats", p.DepositDue, p.DepositCurrency, *p.AmountSats)
	}
	now := businessHours.Add(time.Minute)
	half := p.DepositDue.Div(decimal.NewFromInt(2)).Floor()
	events, err := DecideDeposit(p, RecordDeposit{Amount: half, Now: now})
	p = step(t, p, events, err, "payment.deposit_received")
	if p.Status != StatusCreated || !p.AmountDeposited.Equal(half) {
		t.Fatalf("partial: got %s with %s deposited", p.Status, p.AmountDeposited)
	}
	events, err = DecideDeposit(p, RecordDeposit{Amount: p.Outstanding(), Now: now})
	p = step(t, p, events, err, "payment.deposited")
	_, err = DecideDeposit(p, RecordDeposit{Amount: decimal.NewFromInt(1), Now: now})
	wantError(t, err, Conflict, "payment_not_awaiting_funds")
	if events, _ := DecideExpire(p, p.ExpiresAt.Add(time.Hour)); len(events) != 0 {
		t.Fatal("a deposited payment does not expire")
	}

	// The price fell 2%: the 5% buffer covers it and the rest is change.
	prices := maps.Clone(lifecyclePrices)
	prices["ZAR"] = decimal.NewFromInt(1_764_000)
	events, err = DecideBeginPayout(p, BeginPayout{Prices: prices, Now: now})
	p = step(t, p, events, err, "payment.transferring")
	need := decimal.NewFromInt(1515).Shift(8).Div(decimal.NewFromInt(1_764_000)).Ceil().IntPart()
	if *p.AmountSats != need || *p.ChangeRefundSats != p.AmountDeposited.IntPart()-need || p.ChangeRefundStatus != ChangePending {
		t.Fatalf("conversion: got %d sats, change %d (%s); want %d and the rest", *p.AmountSats, *p.ChangeRefundSats, p.ChangeRefundStatus, need)
	}
	if events, _ := DecideBeginPayout(p, BeginPayout{Prices: prices, Now: now}); len(events) != 0 {
		t.Fatal("a second BeginPayout must decide nothing")
	}
	events, err = DecidePayoutResult(p, PayoutResult{PayoutID: "po_1", Now: now})
	p = step(t, p, events, err, "payment.success")
	if p.AmountSettled == nil || !p.AmountSettled.Equal(decimal.NewFromInt(1500)) || len(p.StatusLogs) != 4 {
		t.Fatalf("success: got settled %v, %d status logs", p.AmountSettled, len(p.StatusLogs))
	}
	if events, _ := DecidePayoutResult(p, PayoutResult{Rejected: true, Reason: "x", Now: now}); len(events) != 0 {
		t.Fatal("a second result must decide nothing")
	}

	// The recipient's bank sends the payout back: the payment stays
	// success, the reversal is logged and the payout is owed again.
	events, err = DecidePayoutReversal(p, PayoutReversal{PayoutID: "po_1", Reason: "account closed", Now: now})
	p = step(t, p, events, err, "payment.payout_reversed")
	if p.Status != StatusSuccess || p.PayoutReversedAt == nil || len(p.StatusLogs) != 5 ||
		p.StatusLog != "Payout reversed by the recipient's bank: account closed" {
		t.Fatalf("reversal: got %s, reversed at %v, %d status logs, %q", p.Status, p.PayoutReversedAt, len(p.StatusLogs), p.StatusLog)
	}
	if posts := PostingsOf(events[0]); len(posts) == 0 {
		t.Fatal("a reversal moves money back and must carry postings")
	}
	if events, _ := DecidePayoutReversal(p, PayoutReversal{PayoutID: "po_1", Reason: "again", Now: now}); len(events) != 0 {
		t.Fatal("a payout is reversed once")
	}
}

func TestPaymentPriceRiseBeyondTheBufferPaysInFull(t *testing.T) {
	t.Parallel()
	p := newPayment(t, `{"MerchantID":"m","Amount":1500,"Reference":"r"}`, testMerchant(CountrySouthAfrica, PayoutBank))
	events, err := DecideDeposit(p, RecordDeposit{Amount: p.DepositDue, Now: businessHours})
	p = step(t, p, events, err, "payment.deposited")
	prices := maps.Clone(lifecyclePrices)
	prices["ZAR"] = decimal.NewFromInt(1_700_000)
	events, err = DecideBeginPayout(p, BeginPayout{Prices: prices, Now: businessHours})
	p = step(t, p, events, err, "payment.transferring")
	if *p.ChangeRefundSats != 0 || p.ChangeRefundStatus != ChangeNone {
		t.Fatalf("got change %d %s, want none", *p.ChangeRefundSats, p.ChangeRefundStatus)
	}
}

func TestPaymentDocumentHold(t *testing.T) {
	t.Parallel()
	p := newPayment(t, `{"MerchantID":"m","Amount":50001,"Reference":"r"}`, testMerchant(CountrySouthAfrica, PayoutBank))
	if p.AwaitsPayout() {
		t.Fatal("AwaitsPayout: got true for a created payment")
	}
	events, err := DecideDeposit(p, RecordDeposit{Amount: p.DepositDue, Now: businessHours})
	p = step(t, p, events, err, "payment.deposited")
	if !p.HeldForDocuments {
		t.Fatal("above ZAR 50,000 without a document: held")
	}
	if events, _ := DecideBeginPayout(p, BeginPayout{Prices: lifecyclePrices, Now: businessHours}); len(events) != 0 {
		t.Fatal("a held payment must not pay out")
	}
	if p.AwaitsPayout() {
		t.Fatal("AwaitsPayout: got true for a payment held for a document")
	}
	events, err = DecideAttachPaymentDocument(p, AttachPaymentDocument{DocumentID: uuid.New(), Now: businessHours})
	p = step(t, p, events, err, "payment.document_attached")
	if !p.HeldForDocuments || !p.AwaitsPayout() {
		t.Fatalf("documented, not yet converted: got heldForDocuments %v and AwaitsPayout %v, want true and true",
			p.HeldForDocuments, p.AwaitsPayout())
	}
	events, err = DecideBeginPayout(p, BeginPayout{Prices: lifecyclePrices, Now: businessHours})
	p = step(t, p, events, err, "payment.transferring")
	if p.HeldForDocuments {
		t.Fatal("released by the document")
	}

	at := newPayment(t, `{"MerchantID":"m","Amount":50000,"Reference":"r"}`, testMerchant(CountrySouthAfrica, PayoutBank))
	events, err = DecideDeposit(at, RecordDeposit{Amount: at.DepositDue, Now: businessHours})
	if at = step(t, at, events, err, "payment.deposited"); at.HeldForDocuments || !at.AwaitsPayout() {
		t.Fatal("exactly ZAR 50,000 is not above the threshold: not held, awaits its payout")
	}
}

// ConvertedAt is the conversion's time, which a document attached while
// the payout runs does not move (UpdatedAt does): the payout takeover's
// grace counts from it.
func TestPaymentConvertedAt(t *testing.T) {
	t.Parallel()
	p := newPayment(t, `{"MerchantID":"m","Amount":1500,"Reference":"r"}`, testMerchant(CountrySouthAfrica, PayoutBank))
	events, err := DecideDeposit(p, RecordDeposit{Amount: p.DepositDue, Now: businessHours})
	p = step(t, p, events, err, "payment.deposited")
	if !p.ConvertedAt().IsZero() {
		t.Fatalf("deposited: got ConvertedAt %v, want zero", p.ConvertedAt())
	}
	converted := businessHours.Add(time.Minute)
	events, err = DecideBeginPayout(p, BeginPayout{Prices: lifecyclePrices, Now: converted})
	p = step(t, p, events, err, "payment.transferring")
	later := converted.Add(5 * time.Second)
	events, err = DecideAttachPaymentDocument(p, AttachPaymentDocument{DocumentID: uuid.New(), Now: later})
	p = step(t, p, events, err, "payment.document_attached")
	if !p.ConvertedAt().Equal(converted) || !p.UpdatedAt.Equal(later) {
		t.Fatalf("document attached while transferring: got ConvertedAt %v and UpdatedAt %v, want %v and %v",
			p.ConvertedAt(), p.UpdatedAt, converted, later)
	}
}

func TestPaymentFailureAndExpiry(t *testing.T) {
	t.Parallel()
	m := testMerchant(CountryKenya, PayoutMomo)
	p := newPayment(t, `{"MerchantID":"m","Amount":1000,"FromCountry":"UK"}`, testMerchant(CountryBTC, PayoutLightning))
	if p.DepositCurrency != "GBP" || p.DepositUnits(15800).String() != "158" {
		t.Fatalf("bank deposits count in cents: got %s for 15800 %s", p.DepositUnits(15800), p.DepositCurrency)
	}
	if events, _ := DecideExpire(p, p.ExpiresAt.Add(-time.Millisecond)); len(events) != 0 {
		t.Fatal("not expired before its validity ends")
	}
	events, err := DecideExpire(p, p.ExpiresAt)
	p = step(t, p, events, err, "payment.expired")
	if p.Status != StatusExpired {
		t.Fatalf("got %s", p.Status)
	}
	if events, _ := DecideExpire(p, p.ExpiresAt); len(events) != 0 {
		t.Fatal("expires once")
	}

	q := newPayment(t, `{"MerchantID":"m","Amount":1000}`, m)
	events, err = DecideDeposit(q, RecordDeposit{Amount: q.DepositDue, Now: businessHours})
	q = step(t, q, events, err, "payment.deposited")
	events, err = DecideBeginPayout(q, BeginPayout{Prices: lifecyclePrices, Now: businessHours})
	q = step(t, q, events, err, "payment.transferring")
	events, err = DecidePayoutResult(q, PayoutResult{Rejected: true, Reason: "the number is not registered for mobile money", Now: businessHours})
	q = step(t, q, events, err, "payment.failed")
	if q.Status != StatusFailed || q.StatusLog != "Payout rejected: the number is not registered for mobile money" {
		t.Fatalf("got %s %q", q.Status, q.StatusLog)
	}
	if events, _ := DecidePayoutReversal(q, PayoutReversal{PayoutID: "x", Reason: "r", Now: businessHours}); len(events) != 0 {
		t.Fatal("only a successful payout can be reversed")
	}
}

func TestPaymentUSDTPaysOutWhatTheUSDTIsWorth(t *testing.T) {
	t.Parallel()
	// 151,000 USDT cents = 1,510 USDT, about 27,180 ZAR at the lifecycle prices.
	p := newPayment(t, `{"MerchantID":"m","Amount":151000,"Reference":"r","FromCountry":"USDT"}`, testMerchant(CountrySouthAfrica, PayoutBank))
	if p.DepositCurrency != "USDT" || p.DepositDue.String() != "1510" || p.DestinationAmount.IntPart() > DocumentsThreshold {
		t.Fatalf("got due %s %s, destination %s", p.DepositDue, p.DepositCurrency, p.DestinationAmount)
	}
	events, err := DecideDeposit(p, RecordDeposit{Amount: p.DepositDue, Now: businessHours})
	p = step(t, p, events, err, "payment.deposited")
	all := PostingsOf(events[0])
	events, err = DecideBeginPayout(p, BeginPayout{Prices: lifecyclePrices, OTCFeeRate: decimal.RequireFromString("0.01"), Now: businessHours})
	p = step(t, p, events, err, "payment.transferring")
	all = append(all, PostingsOf(events[0])...)
	// 1510 USD = 1,510,000 sats; worth 27,180 ZAR; 1% fees 271.80.
	if p.PayoutAmount.String() != "26908.2" || *p.AmountSats != 1_510_000 {
		t.Fatalf("payout: got %s ZAR for %d sats", p.PayoutAmount, *p.AmountSats)
	}
	events, err = DecidePayoutResult(p, PayoutResult{PayoutID: "x", Now: businessHours})
	if p = step(t, p, events, err, "payment.success"); !p.AmountSettled.Equal(p.PayoutAmount) {
		t.Fatalf("settled %s, paid %s", p.AmountSettled, p.PayoutAmount)
	}
	all = append(all, PostingsOf(events[0])...)
	// The fees charged at conversion are earned (the quote's estimate, at
	// the price of its creation, is only what the payment showed).
	balance := balances(all)
	for k, want := range map[string]string{"fees:otc ZAR": "-271.8", "conversion ZAR": "27180", "conversion USDT": "-1510",
		"payout_payable ZAR": "0", "customer_funds USDT": "0", "external:BANK ZAR": "-26908.2"} {
		if !balance[k].Equal(decimal.RequireFromString(want)) {
			t.Errorf("%s: got %s, want %s", k, balance[k], want)
		}
	}
}

// balances sums postings by account and currency, debits positive.
func balances(ps []Posting) map[string]decimal.Decimal {
	balance := map[string]decimal.Decimal{}
	for _, x := range ps {
		k := x.Account + " " + x.Currency
		if x.Side == Debit {
			balance[k] = balance[k].Add(x.Amount)
		} else {
			balance[k] = balance[k].Sub(x.Amount)
		}
	}
	return balance
}

// Whatever the funding, a deposit worth more in sats at conversion than
// the amount and fees cost then (the unused buffer, and any price move in
// the payer's favour) leaves the surplus owed back as change: in sats on
// the payment, booked in the deposit's currency (spec: "surplus is
// refunded as change"). A move against the payer leaves none, and the
// merchant is paid in full.
func TestPaymentChangeIsOwedBack(t *testing.T) {
	t.Parallel()
	za, ke, btc := testMerchant(CountrySouthAfrica, PayoutBank), testMerchant(CountryKenya, PayoutMomo), testMerchant(CountryBTC, PayoutLightning)
	weakNaira := BTCPrices{}
	for cur, price := range lifecyclePrices {
		weakNaira[cur] = price
	}
	weakNaira["NGN"] = lifecyclePrices["NGN"].Mul(decimal.RequireFromString("1.1"))
	for _, tt := range []struct {
		name, body string
		merchant   Merchant
		prices     BTCPrices // at conversion
		rounding   int64     // sats the deposit's rounding up may add to the buffer
	}{
		{"lightning", `{"MerchantID":"m","Amount":1500,"Reference":"r","BufferRate":0.05}`, za, lifecyclePrices, 0},
		{"bank transfer", `{"MerchantID":"m","Amount":1500,"Reference":"r","BufferRate":0.05,"FromCountry":"Nigeria"}`, za, lifecyclePrices, 1},
		{"mobile money", `{"MerchantID":"m","Amount":1500,"BufferRate":0.05,"FromCountry":"KES"}`, ke, lifecyclePrices, 8},
		{"onramp", `{"MerchantID":"m","Amount":50000,"BufferRate":0.05,"FromCountry":"UK"}`, btc, lifecyclePrices, 1},
		{"naira weakened", `{"MerchantID":"m","Amount":1500,"Reference":"r","BufferRate":0.05,"FromCountry":"Nigeria"}`, za, weakNaira, -1},
		// The deposit's rounding up to the penny is worth 6 sats: under a penny back.
		{"pounds without a buffer", `{"MerchantID":"m","Amount":1000,"Reference":"r","FromCountry":"UK"}`, za, lifecyclePrices, -1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := newPayment(t, tt.body, tt.merchant)
			events, err := DecideDeposit(p, RecordDeposit{Amount: p.DepositDue, Now: businessHours, InvoiceSettled: true})
			p = step(t, p, events, err, "payment.deposited")
			all := PostingsOf(events[0])
			events, err = DecideBeginPayout(p, BeginPayout{Prices: tt.prices, OTCFeeRate: decimal.RequireFromString("0.01"), Now: businessHours})
			p = step(t, p, events, err, "payment.transferring")
			all = append(all, PostingsOf(events[0])...)
			balance, unit := balances(all), " "+p.DepositCurrency
			if !balance[AccountCustomerFunds+unit].IsZero() || p.PayoutAmount.IntPart() != p.Amount {
				t.Errorf("customer funds %s, payout %s: want 0 and %d", balance[AccountCustomerFunds+unit], p.PayoutAmount, p.Amount)
			}
			change, owed := *p.ChangeRefundSats, balance[AccountChange+unit].Neg()
			if tt.rounding < 0 {
				if change != 0 || p.ChangeRefundStatus != ChangeNone || !owed.IsZero() {
					t.Errorf("change %d sats (%s), %s%s owed: want none", change, p.ChangeRefundStatus, owed, unit)
				}
				return
			}
			if change < p.BufferAmountSats || change > p.BufferAmountSats+tt.rounding || p.ChangeRefundStatus != ChangePending {
				t.Errorf("change %d sats (%s): want the buffer's %d, up to %d more", change, p.ChangeRefundStatus, p.BufferAmountSats, tt.rounding)
			}
			want, err := p.inDepositCurrency(decimal.NewFromInt(change), tt.prices)
			if err != nil || !owed.Equal(want) || !owed.IsPositive() {
				t.Errorf("owed %s%s, want %s (%v)", owed, unit, want, err)
			}
			if p.Funding == FundingMomo && !owed.Equal(owed.Truncate(0)) {
				t.Errorf("owed %s%s: M-Pesa moves whole shillings", owed, unit)
			}
		})
	}
}

// A payment funded by USDT or bank transfer converts its amount due, not
// what was received over it: that is owed back to the payer (refunds
// payable), so the merchant's payout, the corridor limit and the document
// rule all stand on the amount due.
func TestPaymentOverpaymentIsOwedBack(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, body string
		merchant   Merchant
		payout     string // what the exact deposit pays out
	}{
		{"USDT", `{"MerchantID":"m","Amount":151000,"Reference":"r","FromCountry":"USDT"}`, testMerchant(CountrySouthAfrica, PayoutBank), "26908.2"},
		{"bank transfer", `{"MerchantID":"m","Amount":1000,"FromCountry":"UK"}`, testMerchant(CountryBTC, PayoutLightning), "1000"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := newPayment(t, tt.body, tt.merchant)
			due := p.DepositDue
			events, err := DecideDeposit(p, RecordDeposit{Amount: due.Mul(decimal.NewFromInt(3)), Now: businessHours})
			p = step(t, p, events, err, "payment.deposited")
			events, err = DecideBeginPayout(p, BeginPayout{Prices: lifecyclePrices, OTCFeeRate: decimal.RequireFromString("0.01"), Now: businessHours})
			p = step(t, p, events, err, "payment.transferring")
			if p.PayoutAmount.String() != tt.payout {
				t.Errorf("payout: got %s, want %s (the amount due's)", p.PayoutAmount, tt.payout)
			}
			owed, converted := decimal.Zero, decimal.Zero
			for _, l := range PostingsOf(events[0]) {
				if l.Side == Credit && l.Account == AccountRefunds && l.Currency == p.DepositCurrency {
					owed = owed.Add(l.Amount)
				}
				if l.Side == Credit && l.Account == AccountConversion && l.Currency == p.DepositCurrency {
					converted = converted.Add(l.Amount)
				}
			}
			if !owed.Equal(due.Mul(decimal.NewFromInt(2))) || !converted.Equal(due) {
				t.Errorf("postings: got %s %s owed back and %s converted, want %s and %s", owed, p.DepositCurrency, converted,
					due.Mul(decimal.NewFromInt(2)), due)
			}
			if !strings.Contains(p.StatusLog, "owed back to the payer") {
				t.Errorf("status log: got %q, want it to say what is owed back", p.StatusLog)
			}
		})
	}
}

func TestDepositAfterTheValidityIsRefused(t *testing.T) {
	t.Parallel()
	p := newPayment(t, `{"MerchantID":"m","Amount":1500,"Reference":"r"}`, testMerchant(CountrySouthAfrica, PayoutBank))
	_, err := DecideDeposit(p, RecordDeposit{Amount: p.DepositDue, Now: p.ExpiresAt})
	wantError(t, err, Conflict, "payment_expired")

	// The node settled the invoice (by its clock, after ExpiresAt by ours):
	// paid in time, since the node settles only an unexpired invoice.
	events, err := DecideDeposit(p, RecordDeposit{Amount: p.DepositDue, Now: p.ExpiresAt.Add(time.Second), InvoiceSettled: true})
	step(t, p, events, err, "payment.deposited")
}

func TestPostingsOfALightningPaymentNetOut(t *testing.T) {
	t.Parallel()
	p := newPayment(t, `{"MerchantID":"m","Amount":1500,"Reference":"r","BufferRate":0.05}`, testMerchant(CountrySouthAfrica, PayoutBank))
	var all []Posting
	events, err := DecideDeposit(p, RecordDeposit{Amount: p.DepositDue, Now: businessHours})
	p = step(t, p, events, err, "payment.deposited")
	all = append(all, PostingsOf(events[0])...)
	events, err = DecideBeginPayout(p, BeginPayout{Prices: lifecyclePrices, Now: businessHours})
	p = step(t, p, events, err, "payment.transferring")
	all = append(all, PostingsOf(events[0])...)
	events, err = DecidePayoutResult(p, PayoutResult{PayoutID: "x", Now: businessHours})
	p = step(t, p, events, err, "payment.success")
	all = append(all, PostingsOf(events[0])...)
	balance := balances(all)
	// Settled: nothing held for the payment or owed to the recipient; the
	// fee is earned and the change is owed.
	for _, k := range []string{"customer_funds sats", "payout_payable ZAR"} {
		if !balance[k].IsZero() {
			t.Errorf("%s: got %s, want 0", k, balance[k])
		}
	}
	if !balance["fees:otc ZAR"].Equal(p.OTCFees.Neg()) || !balance["external:BANK ZAR"].Equal(decimal.NewFromInt(-1500)) {
		t.Errorf("balances: got %v", balance)
	}
	if !balance["change_payable sats"].Equal(decimal.NewFromInt(-*p.ChangeRefundSats)) {
		t.Errorf("change: got %s, want -%d", balance["change_payable sats"], *p.ChangeRefundSats)
	}
}

func TestAChainTransferCountsOnce(t *testing.T) {
	t.Parallel()
	p := newPayment(t, `{"MerchantID":"m","Amount":1500,"Reference":"r"}`, testMerchant(CountrySouthAfrica, PayoutBank))
	half := p.DepositDue.Div(decimal.NewFromInt(2))
	events, err := DecideDeposit(p, RecordDeposit{Amount: half, Now: businessHours, Ref: "0xaa:1"})
	p = step(t, p, events, err, "payment.deposit_received")
	// The same log seen again (a restart, another process): nothing.
	if events, err := DecideDeposit(p, RecordDeposit{Amount: half, Now: businessHours, Ref: "0xaa:1"}); err != nil || len(events) != 0 {
		t.Fatalf("the same transfer again: got %v, %v; want nothing", events, err)
	}
	events, err = DecideDeposit(p, RecordDeposit{Amount: half, Now: businessHours, Ref: "0xaa:2"})
	p = step(t, p, events, err, "payment.deposited")
	if !p.AmountDeposited.Equal(p.DepositDue) {
		t.Errorf("deposited %s, want %s", p.AmountDeposited, p.DepositDue)
	}
	// Still nothing once deposited, rather than a 409 to alert on.
	if events, err := DecideDeposit(p, RecordDeposit{Amount: half, Now: businessHours, Ref: "0xaa:2"}); err != nil || len(events) != 0 {
		t.Errorf("the last transfer again: got %v, %v; want nothing", events, err)
	}
}
