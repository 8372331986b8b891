package domain

import (
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

// Unmatched funds are money a rail delivered that no payment could take:
// a credit whose reference names no payment or several, one in another
// currency than its payment's, one for a payment that expired or no longer
// awaits funds, or what exceeds a payment's amount due; a paid M-Pesa
// prompt or a USDT transfer whose payment cannot take it. Each is a stream
// of its own (type "unmatched_funds"), opened with the money held in the
// suspense account, and ended by an operator: assigned to a payment, which
// then proceeds as if the credit had quoted its reference, or marked for
// return to the payer's account as the rail reported it. An item stays in
// the books of the payment's tenant when its credit named one payment, and
// in the operator's (OperatorBooks) otherwise.

// Why funds are unmatched (reason).
const (
	UnmatchedNoMatch       = "no_match"           // the references name no payment
	UnmatchedAmbiguous     = "ambiguous"          // the references name several payments
	UnmatchedWrongCurrency = "wrong_currency"     // not the payment's deposit currency
	UnmatchedExpired       = "expired"            // the payment's validity had ended
	UnmatchedNotAwaiting   = "not_awaiting_funds" // the payment was already funded (or beyond)
	UnmatchedOverpaid      = "overpaid"           // what exceeded the payment's amount due
)

// Unmatched funds statuses.
const (
	UnmatchedOpen      = "open"      // held in suspense, waiting for an operator
	UnmatchedAssigned  = "assigned"  // given to a payment
	UnmatchedReturning = "returning" // owed back to the payer's account
)

// OperatorBooks is the tenant id of the operator's own books: the events
// of unmatched funds that name no single payment, and so no tenant. It is
// no tenant's (tenant ids are random UUIDv7s), and not the nil UUID, which
// readers of the events take for "no tenant".
var OperatorBooks = uuid.MustParse("00000000-0000-0000-0000-000000000001")

// AccountSuspense holds unmatched funds until an operator resolves them.
const AccountSuspense = "suspense:unmatched_funds"

// UnmatchedFunds is the state of one unmatched item's stream.
type UnmatchedFunds struct {
	ID            uuid.UUID       `json:"id"`
	TenantID      uuid.UUID       `json:"tenantId"` // whose books hold it: a tenant, or OperatorBooks
	Status        string          `json:"status"`
	Reason        string          `json:"reason"`
	Rail          string          `json:"rail"` // the funding rail the money came by: BANK_TRANSFER, MOMO or USDT
	Amount        decimal.Decimal `json:"amount"`
	Currency      string          `json:"currency"`
	Entry         BankEntry       `json:"entry"` // other rails: the rail and the account reached, the provider's reference
	References    []string        `json:"references"`
	PaymentID     *uuid.UUID      `json:"paymentId,omitempty"` // the payment the credit named, if one
	DebtorName    string          `json:"debtorName" ledger:"personal"`
	DebtorAccount string          `json:"debtorAccount" ledger:"personal"`
	DebtorBank    string          `json:"debtorBank,omitempty"` // the debtor's bank, as the bank reported it
	AssignedTo    *uuid.UUID      `json:"assignedTo,omitempty"` // the payment it was assigned to
	Return        *PayerRefund    `json:"return,omitempty"`     // the return to the payer a payout rail was asked for (unmatched_return.go)
	ResolvedBy    string          `json:"resolvedBy,omitempty"`
	ReceivedAt    time.Time       `json:"receivedAt"`
	UpdatedAt     time.Time       `json:"updatedAt"`
}

// UnmatchedFundsReceived opens an unmatched item: the money is held in
// suspense.
type UnmatchedFundsReceived struct {
	UnmatchedID   uuid.UUID       `json:"id"`
	TenantID      uuid.UUID       `json:"tenantId"`
	Reason        string          `json:"reason"`
	Rail          string          `json:"rail"`
	Amount        decimal.Decimal `json:"amount"`
	Currency      string          `json:"currency"`
	Entry         BankEntry       `json:"entry"`
	References    []string        `json:"references"`
	PaymentID     *uuid.UUID      `json:"paymentId,omitempty"`
	DebtorName    string          `json:"debtorName" ledger:"personal"`
	DebtorAccount string          `json:"debtorAccount" ledger:"personal"`
	DebtorBank    string          `json:"debtorBank,omitempty"`
	Postings      []Posting       `json:"postings,omitempty"` // double entry, balanced per currency
	At            time.Time       `json:"at"`
}

// UnmatchedFundsAssigned records an operator giving the funds to a
// payment, whose deposit is appended in the same transaction.
type UnmatchedFundsAssigned struct {
	PaymentID uuid.UUID `json:"paymentId"`
	TenantID  uuid.UUID `json:"tenantId"` // the payment's tenant
	By        string    `json:"by"`       // the operator
	Postings  []Posting `json:"postings,omitempty"`
	At        time.Time `json:"at"`
}

// UnmatchedFundsReturnRequested records an operator marking the funds for
// return to the payer's account as the rail reported it: they are owed
// back (refunds_payable) until the bank transfer back is made.
type UnmatchedFundsReturnRequested struct {
	DebtorName    string    `json:"debtorName" ledger:"personal"`
	DebtorAccount string    `json:"debtorAccount" ledger:"personal"`
	By            string    `json:"by"`
	Postings      []Posting `json:"postings,omitempty"`
	At            time.Time `json:"at"`
}

func (UnmatchedFundsReceived) EventType() string        { return "unmatched_funds.received" }
func (UnmatchedFundsAssigned) EventType() string        { return "unmatched_funds.assigned" }
func (UnmatchedFundsReturnRequested) EventType() string { return "unmatched_funds.return_requested" }

var (
	_ = register(EventDef{Type: "unmatched_funds.received", Version: 1, New: func() Event { return new(UnmatchedFundsReceived) },
		Doc: "Money arrived that no payment could take (no or several matching references, wrong currency, expired payment, excess; a bank credit, a late M-Pesa payment, a USDT transfer); it is held in suspense for an operator."})
	_ = register(EventDef{Type: "unmatched_funds.assigned", Version: 1, New: func() Event { return new(UnmatchedFundsAssigned) },
		Doc: "An operator gave unmatched funds to a payment, which records them as a deposit in the same transaction."})
	_ = register(EventDef{Type: "unmatched_funds.return_requested", Version: 1, New: func() Event { return new(UnmatchedFundsReturnRequested) },
		Doc: "An operator marked unmatched funds for return to the payer's account as the rail reported it (a bank account, a phone number, a sending address); they are owed back."})
)

// ApplyUnmatched folds one event into u.
func ApplyUnmatched(u UnmatchedFunds, e Event) UnmatchedFunds {
	switch e := e.(type) {
	case UnmatchedFundsReceived:
		u = UnmatchedFunds{ID: e.UnmatchedID, TenantID: e.TenantID, Status: UnmatchedOpen, Reason: e.Reason, Rail: e.Rail,
			Amount: e.Amount, Currency: e.Currency, Entry: e.Entry, References: e.References, PaymentID: e.PaymentID,
			DebtorName: e.DebtorName, DebtorAccount: e.DebtorAccount, DebtorBank: e.DebtorBank, ReceivedAt: e.At, UpdatedAt: e.At}
	case UnmatchedFundsAssigned:
		id := e.PaymentID
		u.Status, u.AssignedTo, u.ResolvedBy, u.UpdatedAt = UnmatchedAssigned, &id, e.By, e.At
	case UnmatchedFundsReturnRequested:
		u.Status, u.ResolvedBy, u.UpdatedAt = UnmatchedReturning, e.By, e.At
	default:
		u = applyReturn(u, e)
	}
	return u
}

// AssignUnmatched is an operator's assignment of an open item to a
// payment of tenant Tenant.
type AssignUnmatched struct {
	Payment     Payment
	Tenant      uuid.UUID
	By          string
	UnmatchedID uuid.UUID // the id of the item an excess opens
	Now         time.Time
}

// AssignOutcome is what an assignment appends: on the item, on the
// payment, and an item for what the payment could not take.
type AssignOutcome struct {
	Item      []Event
	Payment   []Event
	Unmatched []Event
}

// DecideAssignUnmatched gives u to a payment, which takes it as a deposit
// quoting its reference would have: up to its amount due, the excess
// held again as unmatched funds. The payment must be funded by u's rail
// (the money is at that rail's account) and await funds in u's currency,
// of the tenant whose books hold u (any tenant for the operator's items).
func DecideAssignUnmatched(u UnmatchedFunds, c AssignUnmatched) (AssignOutcome, error) {
	p := c.Payment
	switch {
	case u.Status != UnmatchedOpen:
		return AssignOutcome{}, Errorf(Conflict, "unmatched_funds_resolved", "the unmatched funds are %s already", u.Status)
	case c.By == "":
		return AssignOutcome{}, Invalidf("actor", "an assignment names its operator")
	case u.TenantID != OperatorBooks && u.TenantID != c.Tenant:
		return AssignOutcome{}, Errorf(Conflict, "unmatched_funds_other_tenant", "the funds are held in the books of tenant %s, not the payment's", u.TenantID)
	case p.Funding != u.Rail:
		return AssignOutcome{}, Errorf(Conflict, "payment_other_rail", "payment %s is funded by %s, the funds came by %s", p.ID, p.Funding, u.Rail)
	case p.DepositCurrency != u.Currency:
		return AssignOutcome{}, Errorf(Conflict, "currency_mismatch", "the funds are %s and payment %s awaits %s", u.Currency, p.ID, p.DepositCurrency)
	}
	deposit := decimal.Min(u.Amount, p.Outstanding())
	id := u.ID
	events, err := DecideDeposit(p, RecordDeposit{Amount: deposit, Now: c.Now, Source: &DepositSource{UnmatchedID: &id}, Payer: u.payer()})
	if err != nil {
		return AssignOutcome{}, err
	}
	at := c.Now.UTC().Truncate(time.Millisecond)
	// The money leaves the suspense of the item's books for the rail's
	// account, where the payment's deposit takes it in its tenant's books.
	var out AssignOutcome
	var j journal
	j.move(u.Currency, u.Amount, AccountSuspense, ExternalAccount(u.Rail))
	out.Item, out.Payment = []Event{UnmatchedFundsAssigned{PaymentID: p.ID, TenantID: c.Tenant, By: c.By, Postings: j, At: at}}, events
	if excess := u.Amount.Sub(deposit); excess.IsPositive() {
		pid := p.ID
		out.Unmatched = []Event{UnmatchedFundsReceived{UnmatchedID: c.UnmatchedID, TenantID: c.Tenant, Reason: UnmatchedOverpaid,
			Rail: u.Rail, Amount: excess, Currency: u.Currency, Entry: u.Entry, References: u.References, PaymentID: &pid,
			DebtorName: u.DebtorName, DebtorAccount: u.DebtorAccount, DebtorBank: u.DebtorBank,
			Postings: unmatchedInPostings(u.Rail, u.Currency, excess), At: at}}
	}
	return out, nil
}

// payer is who the rail reported sent u, as a payment keeps them: a bank
// debtor's account, the phone an M-Pesa payment came from; nil for a USDT
// sender (nothing can be sent back) or when the rail reported none.
func (u UnmatchedFunds) payer() *Payer {
	switch {
	case u.DebtorAccount == "":
		return nil
	case u.Rail == FundingBankTransfer:
		return &Payer{Name: u.DebtorName, Account: u.DebtorAccount, BankName: u.DebtorBank}
	case u.Rail == FundingMomo:
		return MomoPayer(u.DebtorAccount)
	}
	return nil
}

// ReturnUnmatched is an operator's marking of an open item for return.
type ReturnUnmatched struct {
	By  string
	Now time.Time
}

// DecideReturnUnmatched marks u for return to the account the rail
// reported the payer's: owed back until that transfer is made. Funds
// whose payer's account the rail did not report cannot be returned; they
// wait for an assignment.
func DecideReturnUnmatched(u UnmatchedFunds, c ReturnUnmatched) ([]Event, error) {
	switch {
	case u.Status != UnmatchedOpen:
		return nil, Errorf(Conflict, "unmatched_funds_resolved", "the unmatched funds are %s already", u.Status)
	case c.By == "":
		return nil, Invalidf("actor", "a return names its operator")
	case u.DebtorAccount == "":
		return nil, Errorf(Conflict, "payer_account_unknown", "the bank reported no payer's account for entry %s: assign the funds instead", u.Entry.EntryRef)
	}
	var j journal
	j.move(u.Currency, u.Amount, AccountSuspense, AccountRefunds)
	return []Event{UnmatchedFundsReturnRequested{DebtorName: u.DebtorName, DebtorAccount: u.DebtorAccount, By: c.By,
		Postings: j, At: c.Now.UTC().Truncate(time.Millisecond)}}, nil
}

// unmatchedInPostings: the money is at the rail's account, held in suspense.
func unmatchedInPostings(rail, currency string, amount decimal.Decimal) []Posting {
	var j journal
	j.move(currency, amount, ExternalAccount(rail), AccountSuspense)
	return j
}

// RailFunds is money a funding rail other than the bank's reports
// delivered that no payment took: a paid M-Pesa prompt whose payment had
// ended, a USDT transfer to a deposit address whose payment cannot take
// it. Each rail reports it once or more (a callback redelivered, a second
// watcher); Entry makes the item one.
type RailFunds struct {
	Rail      string     // the funding rail: FundingMomo, FundingUSDT
	TenantID  uuid.UUID  // whose books: the payment's tenant, or OperatorBooks
	PaymentID *uuid.UUID // the payment the money was meant for, when one exists
	Reason    string
	Amount    decimal.Decimal
	Currency  string
	Account   string // where the rail received it: the paybill, the deposit address
	Reference string // the provider's own reference: an M-Pesa receipt, a transaction hash and log index
	Payer     string // the payer's account as the rail reported it: a phone number, a sending address
}

// DecideRailFunds opens an unmatched item id for f, held in suspense. Its
// entry is the rail's account and the provider's reference, recorded once
// as a bank entry is, so a second report of the same money opens nothing.
func DecideRailFunds(f RailFunds, id uuid.UUID, now time.Time) ([]Event, error) {
	switch {
	case f.Rail == "" || f.Rail == FundingBankTransfer:
		return nil, Invalidf("rail", "a bank transfer is recorded from the bank's report, not as %q", f.Rail)
	case f.Reference == "" || f.Account == "":
		return nil, Invalidf("reference", "rail funds name the provider's reference and the account they reached")
	case !f.Amount.IsPositive():
		return nil, Invalidf("amount", "must be greater than 0")
	}
	refs := []string{f.Reference}
	return []Event{UnmatchedFundsReceived{UnmatchedID: id, TenantID: f.TenantID, Reason: f.Reason, Rail: f.Rail, Amount: f.Amount,
		Currency: f.Currency, Entry: BankEntry{Account: f.Rail + ":" + f.Account, EntryRef: f.Reference}, References: refs,
		PaymentID: f.PaymentID, DebtorAccount: f.Payer, Postings: unmatchedInPostings(f.Rail, f.Currency, f.Amount),
		At: now.UTC().Truncate(time.Millisecond)}}, nil
}

// UnmatchedReasonOf is why a payment refused a deposit (DecideDeposit's
// conflict), as an unmatched item's reason.
func UnmatchedReasonOf(err error) string {
	var e *Error
	if errors.As(err, &e) && e.Code == "payment_expired" {
		return UnmatchedExpired
	}
	return UnmatchedNotAwaiting
}
