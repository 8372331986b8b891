package domain

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

// paidOut is a payment of body, deposited by payer and paid out, whose
// 5% buffer is left as change: the state the change refund starts from.
func paidOut(t *testing.T, body string, m Merchant, payer *Payer) (Payment, []Posting) {
	t.Helper()
	p := newPayment(t, body, m)
	events, err := DecideDeposit(p, RecordDeposit{Amount: p.DepositDue, Now: businessHours, InvoiceSettled: true, Payer: payer})
	p = step(t, p, events, err, "payment.deposited")
	all := PostingsOf(events[0])
	events, err = DecideBeginPayout(p, BeginPayout{Prices: lifecyclePrices, OTCFeeRate: decimal.RequireFromString("0.01"), Now: businessHours})
	p = step(t, p, events, err, "payment.transferring")
	all = append(all, PostingsOf(events[0])...)
	events, err = DecidePayoutResult(p, PayoutResult{PayoutID: "po_1", Now: businessHours})
	p = step(t, p, events, err, "payment.success")
	if p.ChangeRefundStatus != ChangePending || !p.ChangeOwed().IsPositive() {
		t.Fatalf("change %s owed %s, want pending and above 0", p.ChangeRefundStatus, p.ChangeOwed())
	}
	return p, append(all, PostingsOf(events[0])...)
}

var everyRail RefundRails = func(string, string) bool { return true }

// A successful payment's change goes back by the rail that can pay the
// payer the funding rail reported; a payer no rail can pay is queued for
// an operator, with the reason.
func TestChangeRefundRoute(t *testing.T) {
	t.Parallel()
	za, ke := testMerchant(CountrySouthAfrica, PayoutBank), testMerchant(CountryKenya, PayoutMomo)
	phone := &Payer{PhoneNumber: "+254712345678"}
	bank := &Payer{Name: "Ada Obi", Account: "0123456789", BankName: "Access Bank"}
	paysOnly := func(rail, currency string) RefundRails {
		return func(r, c string) bool { return r == rail && c == currency }
	}
	for _, tt := range []struct {
		name, body string
		merchant   Merchant
		payer      *Payer
		rails      RefundRails
		want       string // the event
		rail, why  string
	}{
		{"m-pesa phone", `{"MerchantID":"m","Amount":1500,"BufferRate":0.05,"FromCountry":"KES"}`, ke, phone, paysOnly("MOMO", "KES"),
			"payment.change_refund_sent", "MOMO", ""},
		{"naira account", `{"MerchantID":"m","Amount":1500,"Reference":"r","BufferRate":0.05,"FromCountry":"Nigeria"}`, za, bank,
			paysOnly("BANK", "NGN"), "payment.change_refund_sent", "BANK", ""},
		{"euro account, no euro rail", `{"MerchantID":"m","Amount":1500,"Reference":"r","BufferRate":0.05,"FromCountry":"Europe"}`, za, bank,
			paysOnly("BANK", "NGN"), "payment.change_refund_queued", "", "no payout rail pays BANK in EUR"},
		{"m-pesa without B2C", `{"MerchantID":"m","Amount":1500,"BufferRate":0.05,"FromCountry":"KES"}`, ke, phone, paysOnly("BANK", "NGN"),
			"payment.change_refund_queued", "", "no payout rail pays MOMO in KES"},
		{"lightning", `{"MerchantID":"m","Amount":1500,"Reference":"r","BufferRate":0.05}`, za, nil, everyRail,
			"payment.change_refund_queued", "", "a Lightning payer is anonymous: there is no one to pay back"},
		{"bank payer not reported", `{"MerchantID":"m","Amount":1500,"Reference":"r","BufferRate":0.05,"FromCountry":"Nigeria"}`, za, nil,
			everyRail, "payment.change_refund_queued", "", "the rail did not report the payer"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, _ := paidOut(t, tt.body, tt.merchant, tt.payer)
			events, err := DecideSendChangeRefund(p, SendChangeRefund{Rails: tt.rails, Now: businessHours})
			after := step(t, p, events, err, tt.want)
			switch e := events[0].(type) {
			case PaymentChangeRefundSent:
				if e.Rail != tt.rail || !e.Amount.Equal(p.ChangeOwed()) || e.Currency != p.DepositCurrency ||
					e.IdempotencyKey != "change-"+p.ID.String() || after.ChangeRefundStatus != ChangeSending {
					t.Errorf("got %+v (%s), want %s of %s %s keyed change-<payment id>", e, after.ChangeRefundStatus, tt.rail,
						p.ChangeOwed(), p.DepositCurrency)
				}
			case PaymentChangeRefundQueued:
				if e.Reason != tt.why || after.ChangeRefundStatus != ChangeQueued || after.ChangeRefund.Reason != tt.why {
					t.Errorf("got %+v (%s), want queued: %s", e, after.ChangeRefundStatus, tt.why)
				}
			}
			if again, err := DecideSendChangeRefund(after, SendChangeRefund{Rails: tt.rails, Now: businessHours}); err != nil || len(again) > 0 {
				t.Errorf("decided again: %v %v, want nothing", again, err)
			}
		})
	}
}

// Only a successful payment with change pending sends a refund.
func TestChangeRefundWaitsForTheSuccessfulPayout(t *testing.T) {
	t.Parallel()
	p := newPayment(t, `{"MerchantID":"m","Amount":1500,"BufferRate":0.05,"FromCountry":"KES"}`, testMerchant(CountryKenya, PayoutMomo))
	events, err := DecideDeposit(p, RecordDeposit{Amount: p.DepositDue, Now: businessHours, InvoiceSettled: true,
		Payer: &Payer{PhoneNumber: "+254712345678"}})
	p = step(t, p, events, err, "payment.deposited")
	events, err = DecideBeginPayout(p, BeginPayout{Prices: lifecyclePrices, OTCFeeRate: decimal.RequireFromString("0.01"), Now: businessHours})
	p = step(t, p, events, err, "payment.transferring")
	if events, err := DecideSendChangeRefund(p, SendChangeRefund{Rails: everyRail, Now: businessHours}); err != nil || len(events) > 0 {
		t.Errorf("transferring: got %v %v, want nothing", events, err)
	}
	events, err = DecidePayoutResult(p, PayoutResult{Rejected: true, Reason: "no", Now: businessHours})
	p = step(t, p, events, err, "payment.failed")
	if events, err := DecideSendChangeRefund(p, SendChangeRefund{Rails: everyRail, Now: businessHours}); err != nil || len(events) > 0 {
		t.Errorf("failed: got %v %v, want nothing", events, err)
	}
}

// The rail's answer ends a refund sent: refunded, moving the change owed to
// the rail's account so change_payable nets to zero, or refused and
// queued. An operator pays a queued one by hand, from the funding rail.
func TestChangeRefundOutcomes(t *testing.T) {
	t.Parallel()
	body, ke := `{"MerchantID":"m","Amount":1500,"BufferRate":0.05,"FromCountry":"KES"}`, testMerchant(CountryKenya, PayoutMomo)
	sent := func(t *testing.T) (Payment, []Posting) {
		p, all := paidOut(t, body, ke, &Payer{PhoneNumber: "+254712345678"})
		events, err := DecideSendChangeRefund(p, SendChangeRefund{Rails: everyRail, Now: businessHours})
		return step(t, p, events, err, "payment.change_refund_sent"), all
	}
	t.Run("refunded", func(t *testing.T) {
		t.Parallel()
		p, all := sent(t)
		events, err := DecideChangeRefundResult(p, PayoutResult{PayoutID: "RKT1", Now: businessHours})
		after := step(t, p, events, err, "payment.change_refunded")
		balance := balances(append(all, PostingsOf(events[0])...))
		if !balance["change_payable KES"].IsZero() || !balance["external:MOMO KES"].Equal(p.AmountDeposited.Sub(p.PayoutAmount).Sub(p.ChangeOwed())) {
			t.Errorf("change_payable %s, external:MOMO %s: want 0 and what came in less the payout and the change",
				balance["change_payable KES"], balance["external:MOMO KES"])
		}
		if after.ChangeRefundStatus != ChangeRefunded || after.ChangeRefund.PayoutID != "RKT1" || after.Status != StatusSuccess ||
			after.ChangeRefund.Outcome != RefundSucceeded {
			t.Errorf("got %s %+v %s, want refunded by RKT1, still success", after.ChangeRefundStatus, after.ChangeRefund, after.Status)
		}
		if again, err := DecideChangeRefundResult(after, PayoutResult{PayoutID: "RKT1", Now: businessHours}); err != nil || len(again) > 0 {
			t.Errorf("the answer seen twice: got %v %v, want nothing", again, err)
		}
		_, err = DecideResolveChangeRefund(after, ResolveChangeRefund{Reference: "x", By: "ops", Now: businessHours})
		wantError(t, err, Conflict, "change_refund_not_queued")

		// The payer's bank sends the refund back: owed again, queued.
		all = append(all, PostingsOf(events[0])...)
		events, err = DecideChangeRefundReversal(after, PayoutReversal{PayoutID: "RKT1", Reason: "account closed", Now: businessHours})
		after = step(t, after, events, err, "payment.change_refund_queued")
		balance = balances(append(all, PostingsOf(events[0])...))
		if !balance["change_payable KES"].Equal(p.ChangeOwed().Neg()) || after.ChangeRefundStatus != ChangeQueued ||
			after.ChangeRefund.Reason != "the payer's bank reversed the refund: account closed" || after.ChangeRefund.Outcome != RefundReversed {
			t.Errorf("after the reversal: change_payable %s, %s %+v; want the change owed again, queued", balance["change_payable KES"],
				after.ChangeRefundStatus, after.ChangeRefund)
		}
		if again, err := DecideChangeRefundReversal(after, PayoutReversal{PayoutID: "RKT1", Now: businessHours}); err != nil || len(again) > 0 {
			t.Errorf("the reversal reported twice: got %v %v, want nothing", again, err)
		}
		events, err = DecideResolveChangeRefund(after, ResolveChangeRefund{Reference: "BANK-1", By: "ops", Now: businessHours})
		after = step(t, after, events, err, "payment.change_refunded")
		if again, err := DecideChangeRefundReversal(after, PayoutReversal{PayoutID: "RKT1", Now: businessHours}); err != nil || len(again) > 0 {
			t.Errorf("the reversal reported after an operator paid: got %v %v, want nothing", again, err)
		}
		if after.ChangeRefund.Outcome != RefundReversed { // the rail's record stays reversed: the operator paid another way
			t.Errorf("paid by hand after a reversal: the rail's outcome is %q, want reversed", after.ChangeRefund.Outcome)
		}
	})
	t.Run("refused, then paid by hand", func(t *testing.T) {
		t.Parallel()
		p, all := sent(t)
		events, err := DecideChangeRefundResult(p, PayoutResult{Rejected: true, Reason: "the number is not registered", Now: businessHours})
		p = step(t, p, events, err, "payment.change_refund_queued")
		if p.ChangeRefundStatus != ChangeQueued || p.ChangeRefund.Reason != "the payout rail refused the refund: the number is not registered" ||
			p.ChangeRefund.Outcome != RefundFailed {
			t.Fatalf("got %s %+v, want queued with the rail's reason", p.ChangeRefundStatus, p.ChangeRefund)
		}
		for _, bad := range []struct {
			c     ResolveChangeRefund
			field string
		}{{ResolveChangeRefund{Reference: "r"}, "actor"}, {ResolveChangeRefund{Reference: " ", By: "ops"}, "reference"}} {
			_, err := DecideResolveChangeRefund(p, bad.c)
			wantError(t, err, Invalid, "validation_failed", bad.field)
		}
		events, err = DecideResolveChangeRefund(p, ResolveChangeRefund{Reference: " BANK-REF-9 ", By: "ops", Now: businessHours})
		p = step(t, p, events, err, "payment.change_refunded")
		balance := balances(append(all, PostingsOf(events[0])...))
		if !balance["change_payable KES"].IsZero() || p.ChangeRefund.PayoutID != "BANK-REF-9" || p.ChangeRefund.ResolvedBy != "ops" ||
			p.ChangeRefund.Reason != "" || p.ChangeRefund.Outcome != RefundFailed {
			t.Errorf("change_payable %s, refund %+v: want 0, paid by ops as BANK-REF-9, the rail's refusal kept", balance["change_payable KES"], p.ChangeRefund)
		}
	})
}

// A payment keeps the payer its first deposit's rail reported: a bank
// credit's debtor (with the debtor's bank, which a bank payout needs), the
// phone an M-Pesa payment came from, the sender of unmatched funds an
// operator assigned.
func TestPaymentKeepsItsPayer(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	credit := BankCredit{Entry: BankEntry{Account: "NG01", EntryRef: "E1"}, Amount: decimal.RequireFromString("40"), Currency: "EUR",
		References: []string{"LDGX"}, DebtorName: "Ada Obi", DebtorAccount: "0123456789", DebtorBank: "Access Bank"}
	p := bankPayment(StatusCreated, now.Add(time.Hour))
	out, err := DecideBankCredit(ReceiveBankCredit{Credit: credit, Matches: []TenantPayment{{Payment: p}}, UnmatchedID: uuid.New(), Now: now})
	p = step(t, p, out.Payment, err, "payment.deposit_received")
	want := Payer{Name: "Ada Obi", Account: "0123456789", BankName: "Access Bank"}
	if p.Payer == nil || *p.Payer != want {
		t.Fatalf("got payer %+v, want %+v", p.Payer, want)
	}
	// A second credit from someone else does not change who is paid back.
	credit.Entry.EntryRef, credit.DebtorAccount, credit.Amount = "E2", "999", decimal.RequireFromString("65")
	out, err = DecideBankCredit(ReceiveBankCredit{Credit: credit, Matches: []TenantPayment{{Payment: p}}, UnmatchedID: uuid.New(), Now: now})
	if p = step(t, p, out.Payment, err, "payment.deposited"); *p.Payer != want {
		t.Errorf("after a second payer: got %+v, want %+v", p.Payer, want)
	}

	momo := UnmatchedFunds{ID: uuid.New(), TenantID: OperatorBooks, Status: UnmatchedOpen, Rail: FundingMomo, Amount: decimal.NewFromInt(100),
		Currency: "KES", DebtorAccount: "254712345678"}
	m := Payment{ID: uuid.New(), Funding: FundingMomo, Status: StatusCreated, DepositCurrency: "KES", DepositDue: decimal.NewFromInt(100),
		ExpiresAt: now.Add(time.Hour)}
	assigned, err := DecideAssignUnmatched(momo, AssignUnmatched{Payment: m, By: "ops", Now: now})
	if m = step(t, m, assigned.Payment, err, "payment.deposited"); m.Payer == nil || m.Payer.PhoneNumber != "+254712345678" {
		t.Errorf("assigned M-Pesa funds: got payer %+v, want +254712345678", m.Payer)
	}
}
