package domain

import (
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

// A payment's change (the unused buffer, booked to change_payable at
// conversion) is paid back once its payout has succeeded, to the payer as
// the funding rail reported them: an M-Pesa phone by B2C, a bank account
// in a currency the bank payout rail pays. The intent is recorded first
// (payment.change_refund_sent, with its own idempotency key, never the
// payout's), so a crash after the rail's call repeats the call with the
// same key instead of paying again. A refund no rail can make (a Lightning
// payer is anonymous; USDT cannot be sent, the service holds no keys; a
// bank payer in a currency no rail pays; a payer the rail did not report;
// a refund the rail refused) waits for an operator, who pays it by hand
// and records it with a reference.

// Change refund statuses beyond none and pending (changeRefundStatus).
const (
	ChangeSending  = "sending"  // the refund was asked of a payout rail, which has not answered
	ChangeRefunded = "refunded" // paid back to the payer (by a rail, or by an operator)
	ChangeQueued   = "queued"   // no rail can pay it: waits for an operator
)

// Payer is who paid a payment in, as the funding rail reported them: the
// phone an M-Pesa prompt was paid from, the debtor of a bank credit. Nil
// for Lightning (anonymous) and USDT.
type Payer struct {
	Name        string `json:"name,omitempty" ledger:"personal"`
	PhoneNumber string `json:"phoneNumber,omitempty" ledger:"personal"` // E.164
	Account     string `json:"account,omitempty" ledger:"personal"`     // an IBAN or account number
	BankName    string `json:"bankName,omitempty"`                      // the debtor's bank, as the bank reported it
}

// MomoPayer is the payer of an M-Pesa payment from msisdn, the number as
// Daraja reports it (2547XXXXXXXX), kept in E.164 as momo numbers are.
func MomoPayer(msisdn string) *Payer {
	if msisdn == "" {
		return nil
	}
	return &Payer{PhoneNumber: "+" + strings.TrimPrefix(msisdn, "+")}
}

// PayerRefund is how money owed to a payer (a payment's change, returned
// unmatched funds) is being, or was, paid back.
type PayerRefund struct {
	Rail           string `json:"rail,omitempty"`           // the payout rail asked: MOMO or BANK
	IdempotencyKey string `json:"idempotencyKey,omitempty"` // ChangeRefundKey
	PayoutID       string `json:"payoutId,omitempty"`       // the rail's id of the refund, or the operator's reference
	Reason         string `json:"reason,omitempty"`         // why it waits for an operator
	ResolvedBy     string `json:"resolvedBy,omitempty"`     // the operator who paid it by hand, or found the rail's payment on its provider's statement
	// Outcome is what the rail did with the refund it was asked for, as its
	// provider's records show it (reconciliation compares them): success,
	// failed (refused), reversed (made, then sent back); empty while the
	// rail has not answered, or when no rail was asked. An operator paying
	// by hand afterwards does not change it: that money left another way.
	Outcome string `json:"outcome,omitempty"`
}

// Outcomes of a PayerRefund, the statement's statuses of the provider's record.
const (
	RefundSucceeded = "success"
	RefundFailed    = "failed"
	RefundReversed  = "reversed"
)

// ChangeRefundKey is the idempotency key of p's change refund: the rails
// de-duplicate by it (M-Pesa's OriginatorConversationID, Paystack's
// reference), and it is never the payout's key (the payment id).
func ChangeRefundKey(paymentID uuid.UUID) string { return "change-" + paymentID.String() }

// PaymentChangeRefundSent records the refund intent before the rail is
// called.
type PaymentChangeRefundSent struct {
	Rail           string          `json:"rail"`
	Amount         decimal.Decimal `json:"amount"` // in Currency, the payment's deposit currency
	Currency       string          `json:"currency"`
	IdempotencyKey string          `json:"idempotencyKey"`
	At             time.Time       `json:"at"`
}

// PaymentChangeRefunded records the change paid back: by the rail (with
// ResolvedBy, the operator who found the rail's payment on its provider's
// statement when the rail could not account for it), or, queued, by an
// operator by hand (ResolvedBy) with their reference.
type PaymentChangeRefunded struct {
	PayoutID   string    `json:"payoutId"`
	ResolvedBy string    `json:"resolvedBy,omitempty"`
	Postings   []Posting `json:"postings,omitempty"` // double entry, balanced per currency
	At         time.Time `json:"at"`
}

// PaymentChangeRefundQueued records a change refund no rail can make: it
// waits for an operator, and stays owed (change_payable) meanwhile. A
// refund the payer's bank reversed after it was made is queued again, its
// postings bringing the change back to change_payable.
type PaymentChangeRefundQueued struct {
	Reason   string    `json:"reason"`
	Postings []Posting `json:"postings,omitempty"` // double entry, balanced per currency
	At       time.Time `json:"at"`
}

func (PaymentChangeRefundSent) EventType() string   { return "payment.change_refund_sent" }
func (PaymentChangeRefunded) EventType() string     { return "payment.change_refunded" }
func (PaymentChangeRefundQueued) EventType() string { return "payment.change_refund_queued" }

var (
	_ = register(EventDef{Type: "payment.change_refund_sent", Version: 1, New: func() Event { return new(PaymentChangeRefundSent) },
		Doc: "The payment's change is being paid back to its payer by a payout rail (recorded before the rail is called)."})
	_ = register(EventDef{Type: "payment.change_refunded", Version: 1, New: func() Event { return new(PaymentChangeRefunded) },
		Doc: "The payment's change was paid back to its payer, by the rail or by an operator (resolvedBy: paid by hand, or found paid on the rail's statement)."})
	_ = register(EventDef{Type: "payment.change_refund_queued", Version: 1, New: func() Event { return new(PaymentChangeRefundQueued) },
		Doc: "No rail can pay the payment's change back (the payer is unknown, or no configured rail pays them, or the rail refused): it waits for an operator."})
)

// applyChangeRefund folds a change refund event into p. The status and
// its history are the payout's and stay as they are.
func applyChangeRefund(p Payment, e Event) Payment {
	switch e := e.(type) {
	case PaymentChangeRefundSent:
		p.ChangeRefundStatus, p.ChangeRefund = ChangeSending, &PayerRefund{Rail: e.Rail, IdempotencyKey: e.IdempotencyKey}
		p.UpdatedAt = e.At
	case PaymentChangeRefunded:
		r := p.changeRefund()
		r.PayoutID, r.ResolvedBy, r.Reason = e.PayoutID, e.ResolvedBy, ""
		if p.ChangeRefundStatus == ChangeSending { // the rail paid it (as it reported, or as an operator found): not by hand
			r.Outcome = RefundSucceeded
		}
		p.ChangeRefundStatus, p.ChangeRefund, p.UpdatedAt = ChangeRefunded, &r, e.At
	case PaymentChangeRefundQueued:
		r := p.changeRefund()
		r.Reason = e.Reason
		switch p.ChangeRefundStatus {
		case ChangeSending: // the rail refused it
			r.Outcome = RefundFailed
		case ChangeRefunded: // the payer's bank sent it back
			r.Outcome = RefundReversed
		}
		p.ChangeRefundStatus, p.ChangeRefund, p.UpdatedAt = ChangeQueued, &r, e.At
	}
	return p
}

// changeRefund is a copy of p's refund details, so folds never share them.
func (p Payment) changeRefund() PayerRefund {
	if p.ChangeRefund == nil {
		return PayerRefund{}
	}
	return *p.ChangeRefund
}

// ChangeOwed is p's change in its deposit currency, as the conversion
// booked it to change_payable.
func (p Payment) ChangeOwed() decimal.Decimal {
	if p.ChangeDue == nil {
		return decimal.Zero
	}
	return *p.ChangeDue
}

// RefundRails says whether a configured payout rail pays rail (MOMO or
// BANK) in currency.
type RefundRails func(rail, currency string) bool

// changeRefundRail is the payout rail that can pay p's payer back, or why
// none can.
func (p Payment) changeRefundRail(can RefundRails) (rail, why string) {
	switch {
	case p.Funding == FundingLightning:
		return "", "a Lightning payer is anonymous: there is no one to pay back"
	case p.Funding == FundingUSDT:
		return "", "USDT cannot be sent back: the service holds no keys"
	case p.Funding == FundingMomo && p.Payer != nil && p.Payer.PhoneNumber != "":
		rail = PayoutMomo
	case p.Funding == FundingBankTransfer && p.Payer != nil && p.Payer.Account != "":
		rail = PayoutBank
	default:
		return "", "the rail did not report the payer"
	}
	if !can(rail, p.DepositCurrency) {
		return "", fmt.Sprintf("no payout rail pays %s in %s", rail, p.DepositCurrency)
	}
	return rail, ""
}

// SendChangeRefund is the change refund worker's step after a payout
// succeeded.
type SendChangeRefund struct {
	Rails RefundRails
	Now   time.Time
}

// DecideSendChangeRefund records how a successful payment's pending change
// goes back: sent by the rail that can pay its payer, or queued for an
// operator. Anything else (no change, not paid out, already sent) decides
// nothing: the worker may see the same message twice.
func DecideSendChangeRefund(p Payment, c SendChangeRefund) ([]Event, error) {
	if p.Status != StatusSuccess || p.ChangeRefundStatus != ChangePending {
		return nil, nil
	}
	at := c.Now.UTC().Truncate(time.Millisecond)
	rail, why := p.changeRefundRail(c.Rails)
	if why != "" {
		return []Event{PaymentChangeRefundQueued{Reason: why, At: at}}, nil
	}
	return []Event{PaymentChangeRefundSent{Rail: rail, Amount: p.ChangeOwed(), Currency: p.DepositCurrency,
		IdempotencyKey: ChangeRefundKey(p.ID), At: at}}, nil
}

// DecideChangeRefundResult records the rail's answer to a change refund
// sent: refunded, or refused and queued for an operator with the rail's
// reason. A refund no longer sending (the answer seen twice) decides
// nothing.
func DecideChangeRefundResult(p Payment, r PayoutResult) ([]Event, error) {
	if p.ChangeRefundStatus != ChangeSending {
		return nil, nil
	}
	at := r.Now.UTC().Truncate(time.Millisecond)
	if r.Rejected {
		return []Event{PaymentChangeRefundQueued{Reason: "the payout rail refused the refund: " + r.Reason, At: at}}, nil
	}
	return []Event{PaymentChangeRefunded{PayoutID: r.PayoutID, At: at,
		Postings: changeRefundPostings(p, ExternalAccount(p.changeRefund().Rail))}}, nil
}

// DecideChangeRefundReversal records that the payer's bank sent a change
// refund back (a reversed transfer): the change is owed again and waits
// for an operator. Only a refund the rail made can be, once: one an
// operator paid by hand, or a repeated report, decides nothing.
func DecideChangeRefundReversal(p Payment, r PayoutReversal) ([]Event, error) {
	if p.ChangeRefundStatus != ChangeRefunded || p.changeRefund().Outcome != RefundSucceeded {
		return nil, nil
	}
	var j journal
	j.move(p.DepositCurrency, p.ChangeOwed(), ExternalAccount(p.changeRefund().Rail), AccountChange)
	return []Event{PaymentChangeRefundQueued{Reason: "the payer's bank reversed the refund: " + r.Reason, Postings: j,
		At: r.Now.UTC().Truncate(time.Millisecond)}}, nil
}

// ResolveChangeRefund is an operator's record of a queued change refund
// paid by hand.
type ResolveChangeRefund struct {
	Reference string // the operator's reference of the transfer made
	By        string // the operator
	Now       time.Time
}

// DecideResolveChangeRefund records a queued change refund as paid by an
// operator. The money left by the payment's funding rail. Only a queued
// refund can be: a pending or sending one is the worker's, a refunded one
// is paid.
func DecideResolveChangeRefund(p Payment, c ResolveChangeRefund) ([]Event, error) {
	ref := strings.TrimSpace(c.Reference)
	switch {
	case p.ChangeRefundStatus != ChangeQueued:
		return nil, Errorf(Conflict, "change_refund_not_queued", "payment %s's change refund is %s, not queued for an operator",
			p.ID, orNone(p.ChangeRefundStatus))
	case c.By == "":
		return nil, Invalidf("actor", "a change refund paid by hand names its operator")
	case ref == "":
		return nil, Invalidf("reference", "a change refund paid by hand names the transfer's reference")
	}
	return []Event{PaymentChangeRefunded{PayoutID: ref, ResolvedBy: c.By, At: c.Now.UTC().Truncate(time.Millisecond),
		Postings: changeRefundPostings(p, ExternalAccount(p.Funding))}}, nil
}

func orNone(s string) string {
	if s == "" {
		return ChangeNone
	}
	return s
}

// changeRefundPostings: the change owed leaves through the rail's account.
func changeRefundPostings(p Payment, external string) []Posting {
	var j journal
	j.move(p.DepositCurrency, p.ChangeOwed(), AccountChange, external)
	return j
}
