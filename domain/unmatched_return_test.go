package domain

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

// Unmatched funds marked for return go back by the rail that can pay
// their payer: sent with their own key, then returned (refunds_payable to
// the rail's account) or refused. Funds no rail pays back stay returning,
// the operator's to send.
func TestUnmatchedReturn(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	returning := func(rail, currency, account, bank string) UnmatchedFunds {
		u := ApplyUnmatched(UnmatchedFunds{}, UnmatchedFundsReceived{UnmatchedID: uuid.New(), TenantID: OperatorBooks, Reason: UnmatchedNoMatch,
			Rail: rail, Amount: decimal.RequireFromString("120.50"), Currency: currency, DebtorName: "Ada Obi", DebtorAccount: account,
			DebtorBank: bank, At: now})
		events, err := DecideReturnUnmatched(u, ReturnUnmatched{By: "ops", Now: now})
		if err != nil {
			t.Fatal(err)
		}
		return ApplyUnmatched(u, events[0])
	}
	paysNGNAndKES := func(rail, currency string) bool {
		return currency == "NGN" && rail == PayoutBank || currency == "KES" && rail == PayoutMomo
	}
	for _, tt := range []struct {
		name                    string
		u                       UnmatchedFunds
		rail, account, bankName string // "": stays the operator's
	}{
		{"naira account", returning(FundingBankTransfer, "NGN", "0123456789", "Access Bank"), PayoutBank, "0123456789", "Access Bank"},
		{"m-pesa phone", returning(FundingMomo, "KES", "254712345678", ""), PayoutMomo, "", ""},
		{"euro account", returning(FundingBankTransfer, "EUR", "FR76", "BNP Paribas"), "", "", ""},
		{"usdt sender", returning(FundingUSDT, "USDT", "0xabc", ""), "", "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			events, err := DecideSendReturn(tt.u, paysNGNAndKES, now)
			if tt.rail == "" {
				if err != nil || len(events) > 0 {
					t.Fatalf("got %v %v, want nothing: no rail pays it back", events, err)
				}
				return
			}
			wantTypes(t, events, err, "unmatched_funds.return_sent")
			u := ApplyUnmatched(tt.u, roundTrip(t, events[0]))
			payer := u.ReturnPayer()
			if e := events[0].(UnmatchedFundsReturnSent); e.Rail != tt.rail || e.IdempotencyKey != "return-"+u.ID.String() ||
				!e.Amount.Equal(u.Amount) || !u.ReturnSending() || payer.Account != tt.account || payer.BankName != tt.bankName {
				t.Errorf("got %+v, payer %+v; want %s keyed return-<id>", e, payer, tt.rail)
			}
			if again, err := DecideSendReturn(u, paysNGNAndKES, now); err != nil || len(again) > 0 {
				t.Errorf("sent twice: got %v %v", again, err)
			}
			events, err = DecideReturnResult(u, PayoutResult{PayoutID: "TRF_1", Now: now})
			wantTypes(t, events, err, "unmatched_funds.returned")
			if err := CheckBalanced(PostingsOf(events[0])); err != nil || len(PostingsOf(events[0])) != 2 ||
				PostingsOf(events[0])[0].Account != AccountRefunds || PostingsOf(events[0])[1].Account != ExternalAccount(tt.rail) {
				t.Errorf("postings %+v (%v): want refunds_payable to external:%s", PostingsOf(events[0]), err, tt.rail)
			}
			done := ApplyUnmatched(u, events[0])
			if done.Status != UnmatchedReturned || done.Return.PayoutID != "TRF_1" || done.ReturnSending() ||
				done.Return.Outcome != RefundSucceeded {
				t.Errorf("got %s %+v, want returned by TRF_1", done.Status, done.Return)
			}
			if again, err := DecideReturnResult(done, PayoutResult{PayoutID: "TRF_1", Now: now}); err != nil || len(again) > 0 {
				t.Errorf("the answer seen twice: got %v %v", again, err)
			}
			events, err = DecideReturnResult(u, PayoutResult{Rejected: true, Reason: "no such account", Now: now})
			wantTypes(t, events, err, "unmatched_funds.return_refused")
			if refused := ApplyUnmatched(u, events[0]); refused.Status != UnmatchedReturning || refused.ReturnSending() ||
				refused.Return.Reason != "the payout rail refused the return: no such account" || refused.Return.Outcome != RefundFailed {
				t.Errorf("refused: got %s %+v, want returning, the operator's", refused.Status, refused.Return)
			}
		})
	}
}
