package domain

import (
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

// A bank transfer funds a payment when it quotes the payment's deposit
// reference exactly (spec §2.9: "the deposit must quote the given
// reference exactly") in the payment's currency, while the payment awaits
// funds. Money that cannot be matched that way is never dropped: it is
// held as unmatched funds (unmatched.go) for an operator to assign or
// return.

// BankEntry names one entry the bank reported on one of our collection
// accounts: the account (IBAN or the bank's id) and the bank's reference
// of the entry, which the bank never reuses within the account.
type BankEntry struct {
	Account  string `json:"account"`
	EntryRef string `json:"entryRef"`
}

// BankCredit is an incoming transfer as the bank reported it (a camt.054
// or camt.053 credit entry).
type BankCredit struct {
	Entry         BankEntry
	Amount        decimal.Decimal
	Currency      string
	References    []string // every remittance reference the payer quoted
	DebtorName    string
	DebtorAccount string // IBAN or account number, as the bank reported it
	DebtorBank    string // the debtor's bank, as the bank reported it
}

// payer is who the bank reported paid c; nil when it named no account.
func (c BankCredit) payer() *Payer {
	if c.DebtorAccount == "" {
		return nil
	}
	return &Payer{Name: c.DebtorName, Account: c.DebtorAccount, BankName: c.DebtorBank}
}

// CreditOutcome is what a bank credit does: funds on at most one payment,
// and at most one new unmatched item (the whole credit, or what exceeds
// the payment's amount due). Both are appended in one transaction.
type CreditOutcome struct {
	Payment         []Event   // on the matched payment's stream; nil when it takes nothing
	Unmatched       []Event   // on a new unmatched_funds stream; nil when everything matched
	UnmatchedTenant uuid.UUID // the tenant whose books hold Unmatched: the payment's, or OperatorBooks when no single payment is named
}

// ReceiveBankCredit is a bank credit to match against matches: the
// payments of every tenant whose deposit reference is one of the credit's
// references (each with its tenant).
type ReceiveBankCredit struct {
	Credit      BankCredit
	Matches     []TenantPayment
	UnmatchedID uuid.UUID // the id of the unmatched item it may open
	Now         time.Time
}

// TenantPayment is a payment with the tenant it belongs to.
type TenantPayment struct {
	TenantID uuid.UUID
	Payment  Payment
}

// DecideBankCredit matches a bank credit to the one payment its references
// name and funds it with up to what the payment still awaits; whatever it
// cannot place (no payment named, several named, another currency, a
// payment no longer awaiting funds, an excess) is held as unmatched funds.
func DecideBankCredit(c ReceiveBankCredit) (CreditOutcome, error) {
	cr := c.Credit
	if !cr.Amount.IsPositive() || cr.Entry.EntryRef == "" || cr.Entry.Account == "" {
		return CreditOutcome{}, Invalidf("credit", "a bank credit needs a positive amount, an account and the bank's entry reference")
	}
	received := UnmatchedFundsReceived{UnmatchedID: c.UnmatchedID, Rail: FundingBankTransfer, Amount: cr.Amount,
		Currency: cr.Currency, Entry: cr.Entry, References: slices.Clone(cr.References), DebtorName: cr.DebtorName,
		DebtorAccount: cr.DebtorAccount, DebtorBank: cr.DebtorBank, At: c.Now.UTC().Truncate(time.Millisecond)}
	hold := func(tenant uuid.UUID, reason string, p *Payment) (CreditOutcome, error) {
		received.Reason, received.TenantID = reason, tenant
		if p != nil {
			id := p.ID
			received.PaymentID = &id
		}
		received.Postings = unmatchedInPostings(FundingBankTransfer, received.Currency, received.Amount)
		return CreditOutcome{Unmatched: []Event{received}, UnmatchedTenant: tenant}, nil
	}
	switch len(c.Matches) {
	case 0:
		return hold(OperatorBooks, UnmatchedNoMatch, nil)
	case 1:
	default:
		return hold(OperatorBooks, UnmatchedAmbiguous, nil)
	}
	m := c.Matches[0]
	p := m.Payment
	switch {
	case p.Funding != FundingBankTransfer:
		return hold(OperatorBooks, UnmatchedNoMatch, nil) // a reference of another rail: unreachable, references are made for bank transfers only
	case cr.Currency != p.DepositCurrency:
		return hold(m.TenantID, UnmatchedWrongCurrency, &p)
	case p.Status == StatusExpired || (p.Status == StatusCreated && !c.Now.Before(p.ExpiresAt)):
		return hold(m.TenantID, UnmatchedExpired, &p)
	case p.Status != StatusCreated:
		return hold(m.TenantID, UnmatchedNotAwaiting, &p)
	}
	deposit := decimal.Min(cr.Amount, p.Outstanding())
	entry := cr.Entry
	events, err := DecideDeposit(p, RecordDeposit{Amount: deposit, Now: c.Now, Source: &DepositSource{Entry: &entry}, Payer: cr.payer()})
	if err != nil {
		return CreditOutcome{}, err
	}
	out := CreditOutcome{Payment: events}
	if excess := cr.Amount.Sub(deposit); excess.IsPositive() {
		received.Amount, received.Reason, received.TenantID = excess, UnmatchedOverpaid, m.TenantID
		id := p.ID
		received.PaymentID = &id
		received.Postings = unmatchedInPostings(FundingBankTransfer, received.Currency, excess)
		out.Unmatched, out.UnmatchedTenant = []Event{received}, m.TenantID
	}
	return out, nil
}
