package domain

import (
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

// Unmatched funds an operator marked for return (returning) are paid back
// by the payout rail that can pay the payer the funding rail reported, as
// a payment's change is (change_refund.go): an M-Pesa phone by B2C, a bank
// account in a currency the bank payout rail pays. The intent is recorded
// first, with its own idempotency key, then the rail's answer. Funds no
// rail can pay back (a USDT sender, a euro account), or that the rail
// refused, stay returning for the operator to send by hand, as before.

// ReturnKey is the idempotency key of the return of unmatched funds id.
func ReturnKey(id uuid.UUID) string { return "return-" + id.String() }

// UnmatchedFundsReturnSent records the return asked of a payout rail,
// before it is called.
type UnmatchedFundsReturnSent struct {
	Rail           string          `json:"rail"`
	Amount         decimal.Decimal `json:"amount"`
	Currency       string          `json:"currency"`
	IdempotencyKey string          `json:"idempotencyKey"`
	At             time.Time       `json:"at"`
}

// UnmatchedFundsReturned records the funds paid back to the payer by the
// rail: they leave refunds_payable through the rail's account. ResolvedBy
// is the operator who found the return on the provider's statement when
// the rail could not account for it.
type UnmatchedFundsReturned struct {
	PayoutID   string    `json:"payoutId"`
	ResolvedBy string    `json:"resolvedBy,omitempty"`
	Postings   []Posting `json:"postings,omitempty"` // double entry, balanced per currency
	At         time.Time `json:"at"`
}

// UnmatchedFundsReturnRefused records a return the rail refused: the funds
// stay owed (returning) for the operator to send by hand.
type UnmatchedFundsReturnRefused struct {
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
}

func (UnmatchedFundsReturnSent) EventType() string    { return "unmatched_funds.return_sent" }
func (UnmatchedFundsReturned) EventType() string      { return "unmatched_funds.returned" }
func (UnmatchedFundsReturnRefused) EventType() string { return "unmatched_funds.return_refused" }

var (
	_ = register(EventDef{Type: "unmatched_funds.return_sent", Version: 1, New: func() Event { return new(UnmatchedFundsReturnSent) },
		Doc: "Unmatched funds marked for return are being paid back to the payer by a payout rail (recorded before the rail is called)."})
	_ = register(EventDef{Type: "unmatched_funds.returned", Version: 1, New: func() Event { return new(UnmatchedFundsReturned) },
		Doc: "The payout rail paid unmatched funds back to the payer (as its provider reported, or as an operator found it on the provider's statement: resolvedBy)."})
	_ = register(EventDef{Type: "unmatched_funds.return_refused", Version: 1, New: func() Event { return new(UnmatchedFundsReturnRefused) },
		Doc: "The payout rail refused to pay unmatched funds back; they stay owed for the operator to send by hand."})
)

// UnmatchedReturned is the status of funds paid back to the payer.
const UnmatchedReturned = "returned"

// applyReturn folds a return event into u.
func applyReturn(u UnmatchedFunds, e Event) UnmatchedFunds {
	switch e := e.(type) {
	case UnmatchedFundsReturnSent:
		u.Return, u.UpdatedAt = &PayerRefund{Rail: e.Rail, IdempotencyKey: e.IdempotencyKey}, e.At
	case UnmatchedFundsReturned:
		r := u.payerReturn()
		r.PayoutID, r.ResolvedBy, r.Outcome = e.PayoutID, e.ResolvedBy, RefundSucceeded
		u.Status, u.Return, u.UpdatedAt = UnmatchedReturned, &r, e.At
	case UnmatchedFundsReturnRefused:
		r := u.payerReturn()
		r.Reason, r.Outcome = e.Reason, RefundFailed
		u.Return, u.UpdatedAt = &r, e.At
	}
	return u
}

// payerReturn is a copy of u's return details, so folds never share them.
func (u UnmatchedFunds) payerReturn() PayerRefund {
	if u.Return == nil {
		return PayerRefund{}
	}
	return *u.Return
}

// ReturnSending says whether u's return was asked of a rail that has not
// answered.
func (u UnmatchedFunds) ReturnSending() bool {
	return u.Status == UnmatchedReturning && u.Return != nil && u.Return.Reason == ""
}

// DecideSendReturn records the return of funds marked for return by the
// rail that can pay their payer. Funds no rail can pay back, or whose
// return was asked already, decide nothing: they stay the operator's.
func DecideSendReturn(u UnmatchedFunds, rails RefundRails, now time.Time) ([]Event, error) {
	if u.Status != UnmatchedReturning || u.Return != nil {
		return nil, nil
	}
	payer := u.payer()
	var rail string
	switch {
	case payer == nil:
		return nil, nil
	case payer.PhoneNumber != "":
		rail = PayoutMomo
	default:
		rail = PayoutBank
	}
	if !rails(rail, u.Currency) {
		return nil, nil
	}
	return []Event{UnmatchedFundsReturnSent{Rail: rail, Amount: u.Amount, Currency: u.Currency, IdempotencyKey: ReturnKey(u.ID),
		At: now.UTC().Truncate(time.Millisecond)}}, nil
}

// ReturnPayer is who u goes back to: the payer the rail reported.
func (u UnmatchedFunds) ReturnPayer() Payer {
	if p := u.payer(); p != nil {
		return *p
	}
	return Payer{}
}

// DecideReturnResult records the rail's answer to a return sent: returned,
// or refused (left to the operator). A return no longer sending (the
// answer seen twice) decides nothing.
func DecideReturnResult(u UnmatchedFunds, r PayoutResult) ([]Event, error) {
	if !u.ReturnSending() {
		return nil, nil
	}
	at := r.Now.UTC().Truncate(time.Millisecond)
	if r.Rejected {
		return []Event{UnmatchedFundsReturnRefused{Reason: "the payout rail refused the return: " + r.Reason, At: at}}, nil
	}
	return []Event{UnmatchedFundsReturned{PayoutID: r.PayoutID, Postings: returnPostings(u), At: at}}, nil
}

// returnPostings: the funds owed leave refunds_payable through the rail's
// account.
func returnPostings(u UnmatchedFunds) []Posting {
	var j journal
	j.move(u.Currency, u.Amount, AccountRefunds, ExternalAccount(u.payerReturn().Rail))
	return j
}
