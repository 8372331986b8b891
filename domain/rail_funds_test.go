package domain

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

// TestDecideRailFunds: a paid M-Pesa prompt whose payment had ended is an
// unmatched item held in suspense from the rail's own account, which an
// operator may give to another momo payment (not to a bank-transfer one)
// or return to the phone that paid.
func TestDecideRailFunds(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	tenant, payment := uuid.New(), uuid.New()
	f := RailFunds{Rail: FundingMomo, TenantID: tenant, PaymentID: &payment, Reason: UnmatchedExpired, Amount: decimal.NewFromInt(1290),
		Currency: "KES", Account: "174379", Reference: "SKL000004", Payer: "254712345678"}
	events, err := DecideRailFunds(f, uuid.New(), now)
	wantTypes(t, events, err, "unmatched_funds.received")
	got := events[0].(UnmatchedFundsReceived)
	if err := CheckBalanced(got.Postings); err != nil || got.Postings[0].Account != ExternalAccount(FundingMomo) ||
		got.Entry != (BankEntry{Account: "MOMO:174379", EntryRef: "SKL000004"}) || got.DebtorAccount != "254712345678" {
		t.Fatalf("got %+v (%v)", got, err)
	}
	u := ApplyUnmatched(UnmatchedFunds{}, got)

	momo := Payment{ID: uuid.New(), Funding: FundingMomo, Status: StatusCreated, DepositCurrency: "KES",
		DepositDue: decimal.NewFromInt(1290), ExpiresAt: now.Add(time.Hour), DestinationCountry: CountryBTC}
	_, err = DecideAssignUnmatched(u, AssignUnmatched{Payment: bankPayment(StatusCreated, now.Add(time.Hour)), Tenant: tenant, By: "operator:ann", Now: now})
	wantError(t, err, Conflict, "payment_other_rail")
	out, err := DecideAssignUnmatched(u, AssignUnmatched{Payment: momo, Tenant: tenant, By: "operator:ann", Now: now})
	if err != nil || len(out.Payment) != 1 || out.Payment[0].EventType() != "payment.deposited" {
		t.Fatalf("assign to a momo payment: got %+v, %v", out, err)
	}
	ret, err := DecideReturnUnmatched(u, ReturnUnmatched{By: "operator:ann", Now: now})
	if err != nil || ret[0].(UnmatchedFundsReturnRequested).DebtorAccount != "254712345678" {
		t.Fatalf("return: got %+v, %v", ret, err)
	}

	for name, bad := range map[string]RailFunds{
		"bank":         {Rail: FundingBankTransfer, Amount: f.Amount, Account: "a", Reference: "r"},
		"no reference": {Rail: FundingUSDT, Amount: f.Amount, Account: "0xab"},
		"nothing":      {Rail: FundingUSDT, Account: "0xab", Reference: "0x1:0"},
	} {
		if _, err := DecideRailFunds(bad, uuid.New(), now); ErrorKind(err) != Invalid {
			t.Errorf("%s: got %v, want invalid", name, err)
		}
	}
	if r := UnmatchedReasonOf(Errorf(Conflict, "payment_expired", "x")); r != UnmatchedExpired {
		t.Errorf("got %s", r)
	}
}
