package domain

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

func bankPayment(status string, expires time.Time) Payment {
	return Payment{ID: uuid.New(), Funding: FundingBankTransfer, Status: status, DepositCurrency: "EUR",
		DepositDue: decimal.RequireFromString("105"), ExpiresAt: expires, DestinationCountry: CountryBTC}
}

func TestDecideBankCredit(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	later := now.Add(time.Hour)
	tenant := uuid.New()
	credit := func(amount, cur string) BankCredit {
		return BankCredit{Entry: BankEntry{Account: "DE89370400440532013000", EntryRef: "E1"}, Amount: decimal.RequireFromString(amount),
			Currency: cur, References: []string{"LDGX"}, DebtorAccount: "FR76"}
	}
	for _, tc := range []struct {
		name           string
		credit         BankCredit
		matches        []Payment
		wantPayment    []string
		wantReason     string
		wantUnmatched  string // amount
		wantOperator   bool   // held in the operator's books
		wantDepositAmt string
	}{
		{name: "exact", credit: credit("105", "EUR"), matches: []Payment{bankPayment(StatusCreated, later)},
			wantPayment: []string{"payment.deposited"}, wantDepositAmt: "105"},
		{name: "partial", credit: credit("40", "EUR"), matches: []Payment{bankPayment(StatusCreated, later)},
			wantPayment: []string{"payment.deposit_received"}, wantDepositAmt: "40"},
		{name: "overpaid", credit: credit("120.50", "EUR"), matches: []Payment{bankPayment(StatusCreated, later)},
			wantPayment: []string{"payment.deposited"}, wantDepositAmt: "105", wantReason: UnmatchedOverpaid, wantUnmatched: "15.5"},
		{name: "no match", credit: credit("105", "EUR"), wantReason: UnmatchedNoMatch, wantUnmatched: "105", wantOperator: true},
		{name: "ambiguous", credit: credit("105", "EUR"), matches: []Payment{bankPayment(StatusCreated, later), bankPayment(StatusCreated, later)},
			wantReason: UnmatchedAmbiguous, wantUnmatched: "105", wantOperator: true},
		{name: "wrong currency", credit: credit("105", "GBP"), matches: []Payment{bankPayment(StatusCreated, later)},
			wantReason: UnmatchedWrongCurrency, wantUnmatched: "105"},
		{name: "after validity", credit: credit("105", "EUR"), matches: []Payment{bankPayment(StatusCreated, now)},
			wantReason: UnmatchedExpired, wantUnmatched: "105"},
		{name: "expired", credit: credit("105", "EUR"), matches: []Payment{bankPayment(StatusExpired, now)},
			wantReason: UnmatchedExpired, wantUnmatched: "105"},
		{name: "already funded", credit: credit("105", "EUR"), matches: []Payment{bankPayment(StatusDeposited, later)},
			wantReason: UnmatchedNotAwaiting, wantUnmatched: "105"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var matches []TenantPayment
			for _, p := range tc.matches {
				matches = append(matches, TenantPayment{TenantID: tenant, Payment: p})
			}
			out, err := DecideBankCredit(ReceiveBankCredit{Credit: tc.credit, Matches: matches, UnmatchedID: uuid.New(), Now: now})
			wantTypes(t, out.Payment, err, tc.wantPayment...)
			var all []Posting
			for _, e := range append(append([]Event{}, out.Payment...), out.Unmatched...) {
				all = append(all, PostingsOf(e)...)
			}
			if err := CheckBalanced(all); err != nil {
				t.Errorf("postings: %v", err)
			}
			if tc.wantDepositAmt != "" {
				got := PostingsOf(out.Payment[0])[0]
				if !got.Amount.Equal(decimal.RequireFromString(tc.wantDepositAmt)) || got.Account != ExternalAccount(FundingBankTransfer) {
					t.Errorf("got deposit posting %+v, want %s from %s", got, tc.wantDepositAmt, ExternalAccount(FundingBankTransfer))
				}
			}
			if tc.wantReason == "" {
				if out.Unmatched != nil {
					t.Fatalf("got unmatched %+v, want none", out.Unmatched)
				}
				return
			}
			if len(out.Unmatched) != 1 {
				t.Fatalf("got unmatched %+v, want one item", out.Unmatched)
			}
			u := out.Unmatched[0].(UnmatchedFundsReceived)
			if u.Reason != tc.wantReason || !u.Amount.Equal(decimal.RequireFromString(tc.wantUnmatched)) || u.Entry.EntryRef != "E1" {
				t.Errorf("got %s %s for %s, want %s %s", u.Reason, u.Amount, u.Entry.EntryRef, tc.wantReason, tc.wantUnmatched)
			}
			if wantTenant := map[bool]uuid.UUID{true: OperatorBooks, false: tenant}[tc.wantOperator]; u.TenantID != wantTenant || out.UnmatchedTenant != wantTenant {
				t.Errorf("got tenant %s (outcome %s), want %s", u.TenantID, out.UnmatchedTenant, wantTenant)
			}
		})
	}
}

func TestUnmatchedResolution(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	tenant := uuid.New()
	open := func(tenantID uuid.UUID, amount, debtorAccount string) UnmatchedFunds {
		return ApplyUnmatched(UnmatchedFunds{}, UnmatchedFundsReceived{UnmatchedID: uuid.New(), TenantID: tenantID, Reason: UnmatchedNoMatch,
			Rail: FundingBankTransfer, Amount: decimal.RequireFromString(amount), Currency: "EUR",
			Entry: BankEntry{Account: "A", EntryRef: "E"}, DebtorAccount: debtorAccount, At: now})
	}
	p := bankPayment(StatusCreated, now.Add(time.Hour))

	out, err := DecideAssignUnmatched(open(OperatorBooks, "130", "FR76"), AssignUnmatched{Payment: p, Tenant: tenant, By: "operator:ann", UnmatchedID: uuid.New(), Now: now})
	wantTypes(t, out.Payment, err, "payment.deposited")
	wantTypes(t, out.Item, nil, "unmatched_funds.assigned")
	wantTypes(t, out.Unmatched, nil, "unmatched_funds.received")
	if ex := out.Unmatched[0].(UnmatchedFundsReceived); !ex.Amount.Equal(decimal.NewFromInt(25)) || ex.Reason != UnmatchedOverpaid || ex.TenantID != tenant {
		t.Errorf("got excess %+v, want EUR 25 overpaid in the payment's tenant", ex)
	}
	var all []Posting
	for _, e := range append(append(append([]Event{}, out.Item...), out.Payment...), out.Unmatched...) {
		all = append(all, PostingsOf(e)...)
	}
	if err := CheckBalanced(all); err != nil {
		t.Errorf("assignment postings: %v", err)
	}
	if src := out.Payment[0].(PaymentDeposited).Source; src == nil || src.UnmatchedID == nil || src.Entry != nil {
		t.Errorf("got deposit source %+v, want the unmatched item", src)
	}

	_, err = DecideAssignUnmatched(open(uuid.New(), "10", ""), AssignUnmatched{Payment: p, Tenant: tenant, By: "operator", Now: now})
	wantError(t, err, Conflict, "unmatched_funds_other_tenant")
	usd := p
	usd.DepositCurrency = "GBP"
	_, err = DecideAssignUnmatched(open(OperatorBooks, "10", ""), AssignUnmatched{Payment: usd, Tenant: tenant, By: "operator", Now: now})
	wantError(t, err, Conflict, "currency_mismatch")
	_, err = DecideAssignUnmatched(open(OperatorBooks, "10", ""), AssignUnmatched{Payment: bankPayment(StatusExpired, now), Tenant: tenant, By: "operator", Now: now})
	wantError(t, err, Conflict, "payment_not_awaiting_funds")

	_, err = DecideReturnUnmatched(open(OperatorBooks, "10", ""), ReturnUnmatched{By: "operator", Now: now})
	wantError(t, err, Conflict, "payer_account_unknown")
	u := open(OperatorBooks, "10", "FR76")
	events, err := DecideReturnUnmatched(u, ReturnUnmatched{By: "operator", Now: now})
	wantTypes(t, events, err, "unmatched_funds.return_requested")
	u = ApplyUnmatched(u, events[0])
	if u.Status != UnmatchedReturning || u.ResolvedBy != "operator" {
		t.Errorf("got %s by %q, want returning by operator", u.Status, u.ResolvedBy)
	}
	_, err = DecideReturnUnmatched(u, ReturnUnmatched{By: "operator", Now: now})
	wantError(t, err, Conflict, "unmatched_funds_resolved")
	_, err = DecideAssignUnmatched(u, AssignUnmatched{Payment: p, Tenant: tenant, By: "operator", Now: now})
	wantError(t, err, Conflict, "unmatched_funds_resolved")
}
