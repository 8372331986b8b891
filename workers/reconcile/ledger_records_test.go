package reconcile

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/workers/rails/statement"
)

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func TestLedgerRecords(t *testing.T) {
	t.Parallel()
	at := day.Add(time.Hour)
	bank := &domain.Payment{ID: uuid.New(), Funding: domain.FundingBankTransfer, DepositCurrency: "ZAR"}
	entry := &domain.DepositSource{Entry: &domain.BankEntry{Account: "ZA01", EntryRef: "E1"}}
	lightning := &domain.Payment{ID: uuid.New(), Funding: domain.FundingLightning, DepositCurrency: "sats",
		LightningInvoice: &domain.LightningInvoice{PaymentHash: "ab12"}}
	momo := &domain.Payment{ID: uuid.New(), Funding: domain.FundingMomo, DepositCurrency: "KES"}
	unreported := &domain.Payment{ID: uuid.New(), Funding: domain.FundingMomo, DepositCurrency: "KES"}
	item := &domain.UnmatchedFunds{ID: uuid.New(), Rail: domain.FundingBankTransfer, Amount: dec("70"), Currency: "ZAR",
		Entry: domain.BankEntry{Account: "ZA01", EntryRef: "E2"}}
	assigned := &domain.Payment{ID: uuid.New(), Funding: domain.FundingBankTransfer, DepositCurrency: "ZAR"}
	paid := &domain.Payment{ID: uuid.New(), PayoutMethod: domain.PayoutBank, DestinationCurrency: "ZAR", PayoutAmount: dec("900"),
		Status: domain.StatusSuccess}
	reversedAt := at
	reversed := &domain.Payment{ID: uuid.New(), PayoutMethod: domain.PayoutBank, DestinationCurrency: "ZAR", PayoutAmount: dec("5"),
		Status: domain.StatusSuccess, PayoutReversedAt: &reversedAt}
	failed := &domain.Payment{ID: uuid.New(), PayoutMethod: domain.PayoutLightning, DestinationCurrency: "BTC", PayoutAmount: dec("1000"),
		Status: domain.StatusFailed}
	pending := &domain.Payment{ID: uuid.New(), PayoutMethod: domain.PayoutMomo, DestinationCurrency: "KES", PayoutAmount: dec("300"),
		Status: domain.StatusTransferring}
	// Refunds to payers, each with the rail's outcome its state holds now.
	changed := &domain.Payment{ID: uuid.New(), ChangeRefund: &domain.PayerRefund{Outcome: domain.RefundReversed}}
	sending := &domain.Payment{ID: uuid.New(), ChangeRefund: &domain.PayerRefund{}}
	returned := &domain.UnmatchedFunds{ID: uuid.New(), Return: &domain.PayerRefund{Outcome: domain.RefundSucceeded}}
	refunds := []ledgerEvent{
		{Event: domain.PaymentChangeRefundSent{Rail: domain.PayoutBank, Amount: dec("12.5"), Currency: "NGN",
			IdempotencyKey: domain.ChangeRefundKey(changed.ID), At: at}, Payment: changed},
		{Event: domain.PaymentChangeRefundSent{Rail: domain.PayoutMomo, Amount: dec("7"), Currency: "KES",
			IdempotencyKey: domain.ChangeRefundKey(sending.ID), At: at}, Payment: sending},
		{Event: domain.UnmatchedFundsReturnSent{Rail: domain.PayoutMomo, Amount: dec("100"), Currency: "KES",
			IdempotencyKey: domain.ReturnKey(returned.ID), At: at}, Unmatched: returned},
	}
	events := []ledgerEvent{
		// A bank credit split between a deposit and its excess: one record.
		{Event: domain.PaymentDeposited{Amount: dec("100"), Source: entry, At: at}, Payment: bank},
		{Event: domain.UnmatchedFundsReceived{Rail: domain.FundingBankTransfer, Amount: dec("20"), Currency: "ZAR",
			Entry: *entry.Entry, Reason: domain.UnmatchedOverpaid, At: at}},
		{Event: domain.PaymentDepositReceived{Amount: dec("500"), At: at}, Payment: lightning},
		{Event: domain.PaymentDeposited{Amount: dec("500"), At: at}, Payment: lightning},
		{Event: domain.PaymentDeposited{Amount: dec("250"), Ref: "QK1", At: at}, Payment: momo},
		{Event: domain.PaymentDeposited{Amount: dec("40"), At: at}, Payment: unreported},
		// Unmatched funds received that day, assigned later that day with
		// an excess held again: the receipt is what the bank moved.
		{Event: domain.UnmatchedFundsReceived{Rail: domain.FundingBankTransfer, Amount: dec("70"), Currency: "ZAR", Entry: item.Entry, At: at}},
		{Event: domain.UnmatchedFundsAssigned{PaymentID: assigned.ID, At: at}, Unmatched: item},
		{Event: domain.PaymentDeposited{Amount: dec("60"), Source: &domain.DepositSource{UnmatchedID: &item.ID}, At: at},
			Payment: assigned, Unmatched: item},
		{Event: domain.UnmatchedFundsReceived{Rail: domain.FundingBankTransfer, Amount: dec("10"), Currency: "ZAR", Entry: item.Entry,
			Reason: domain.UnmatchedOverpaid, At: at}},
		// A payout is its intent, with its status as the payment has it now.
		{Event: domain.PaymentTransferring{At: at}, Payment: paid},
		{Event: domain.PaymentTransferring{At: at}, Payment: reversed},
		{Event: domain.PaymentTransferring{At: at}, Payment: failed},
		{Event: domain.PaymentTransferring{At: at}, Payment: pending},
	}
	got := map[key]statement.Record{}
	for _, r := range ledgerRecords(append(events, refunds...)) {
		if _, ok := got[key{r.Rail, r.Ref}]; ok {
			t.Errorf("%s %s listed twice", r.Rail, r.Ref)
		}
		got[key{r.Rail, r.Ref}] = r
	}
	want := []statement.Record{
		{Rail: "BANK_TRANSFER", Ref: "E1", Direction: "in", Amount: dec("120"), Currency: "ZAR", Status: "success"},
		{Rail: "BANK_TRANSFER", Ref: "E2", Direction: "in", Amount: dec("70"), Currency: "ZAR", Status: "success"},
		{Rail: "LIGHTNING", Ref: "ab12", Direction: "in", Amount: dec("1000"), Currency: "sats", Status: "success"},
		{Rail: "MOMO", Ref: "QK1", Direction: "in", Amount: dec("250"), Currency: "KES", Status: "success"},
		{Rail: "MOMO", Ref: "payment:" + unreported.ID.String(), Direction: "in", Amount: dec("40"), Currency: "KES", Status: "success"},
		{Rail: "BANK", Ref: paid.ID.String(), Direction: "out", Amount: dec("900"), Currency: "ZAR", Status: "success"},
		{Rail: "BANK", Ref: reversed.ID.String(), Direction: "out", Amount: dec("5"), Currency: "ZAR", Status: "reversed"},
		{Rail: "LIGHTNING", Ref: failed.ID.String(), Direction: "out", Amount: dec("1000"), Currency: "sats", Status: "failed"},
		{Rail: "MOMO", Ref: pending.ID.String(), Direction: "out", Amount: dec("300"), Currency: "KES", Status: "pending"},
		{Rail: "BANK", Ref: "change-" + changed.ID.String(), Direction: "out", Amount: dec("12.5"), Currency: "NGN", Status: "reversed"},
		{Rail: "MOMO", Ref: "change-" + sending.ID.String(), Direction: "out", Amount: dec("7"), Currency: "KES", Status: "pending"},
		{Rail: "MOMO", Ref: "return-" + returned.ID.String(), Direction: "out", Amount: dec("100"), Currency: "KES", Status: "success"},
	}
	if len(got) != len(want) {
		t.Errorf("got %d records, want %d: %v", len(got), len(want), got)
	}
	for _, w := range want {
		g, ok := got[key{w.Rail, w.Ref}]
		if !ok {
			t.Errorf("no record of %s %s", w.Rail, w.Ref)
			continue
		}
		if g.Direction != w.Direction || !g.Amount.Equal(w.Amount) || g.Currency != w.Currency || g.Status != w.Status {
			t.Errorf("%s %s: got %s %s %s %s, want %s %s %s %s", w.Rail, w.Ref, g.Direction, g.Amount, g.Currency, g.Status,
				w.Direction, w.Amount, w.Currency, w.Status)
		}
	}
	// An assignment whose funds were received on an earlier day moves
	// nothing at the rail that day.
	later := ledgerRecords(events[7:10])
	if len(later) != 0 {
		t.Errorf("an assignment alone: got %v, want no record", later)
	}
}
