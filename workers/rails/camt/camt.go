// Package camt reads the incoming credits of a bank's ISO 20022 cash
// management messages: camt.054 BankToCustomerDebitCreditNotification (one
// message per credit or per batch, the bank's advice of an incoming
// transfer) and camt.053 BankToCustomerStatement (the end-of-day
// statement, which repeats the day's entries). Both carry the same entry
// (ReportEntry) under a different parent: Ntfctn in camt.054, Stmt in
// camt.053. For reconciliation it also reads a statement's other booked
// entries (debits, reversals) and its balances (Bal: OPBD, CLBD, ...).
//
// Written from the published message definitions:
//   - https://mx-message.com/m/camt-054-001-11/BkToCstmrDbtCdtNtfctn/Ntfctn/Ntry/RvslInd
//     and its sibling pages under .../Ntfctn/Ntry (NtryRef, Amt with Ccy,
//     CdtDbtInd CRDT or DBIT, Sts, BookgDt, AcctSvcrRef, NtryDtls/TxDtls
//     with RltdPties, RltdAgts/DbtrAgt/FinInstnId/Nm and RmtInf Ustrd or
//     Strd/CdtrRefInf/Ref);
//   - a statement's balances, Stmt/Bal with Tp/CdOrPrtry/Cd, Amt with Ccy,
//     CdtDbtInd (DBIT: a negative balance) and Dt/Dt or Dt/DtTm; the codes
//     as ISO's external code set defines them (CLBD is the balance at the
//     end of the reporting period: OPBD plus the period's booked entries),
//     quoted in https://github.com/genkgo/camt/issues/156, and a daily
//     statement's layout in https://developers.circle.com/circle-mint/camt053-statements;
//   - https://developer.gs.com/docs/services/transaction-banking/camt54-advices/
//     (a credit advice is /Document/BkToCstmrDbtCdtNtfctn/Ntfctn/Ntry with
//     CdtDbtInd CRDT; the account is Ntfctn/Acct/Id/IBAN or Othr/Id).
//
// Element names are matched without their namespace, so every version of
// the two messages (camt.054.001.02 to .11, camt.053.001.02 to .13) reads
// alike: the versions add elements (Sts/Cd, Dbtr/Pty) that are read too.
package camt

import (
	"cmp"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// MaxSize bounds a file: a day's statement of a busy collection account
// is a few megabytes.
const MaxSize = 32 << 20

// Credit is one incoming transfer as the bank reported it.
type Credit struct {
	Account    string          // our account it was credited to: the IBAN, else the bank's other id
	EntryRef   string          // the bank's reference of the entry: AcctSvcrRef, else NtryRef (with /n for a batch's n-th transaction)
	Amount     decimal.Decimal // positive, in Currency
	Currency   string          // ISO 4217, as the Amt element's Ccy says
	References []string        // the remittance references the payer quoted: every Ustrd and Strd/CdtrRefInf/Ref, trimmed, distinct
	DebtorName string          // the payer, as the bank reported it
	DebtorIBAN string          // the payer's account: the IBAN, else the other id
	DebtorBank string          // the payer's bank (RltdAgts/DbtrAgt/FinInstnId/Nm), which a refund to the account needs
	BookedAt   time.Time       // the booking date (midnight UTC for a date without time); zero when absent
}

// Skipped is an entry that is not a credit to record, and why.
type Skipped struct {
	EntryRef string `json:"entryRef"`
	Reason   string `json:"reason"`
}

// Entry is a booked entry that is not a payer's credit: a debit (money
// the account paid), or a reversal (RvslInd) of a credit or of a debit.
// Reconciliation lists these beside the credits; importing ignores them.
type Entry struct {
	Account  string
	EntryRef string          // as Credit.EntryRef, never split per transaction
	Amount   decimal.Decimal // positive, in Currency
	Currency string
	Debit    bool // CdtDbtInd DBIT: money left the account
	Reversal bool // RvslInd: the entry takes back an earlier one of the other direction
	BookedAt time.Time
}

// Balance is one balance (Bal) a statement gives of an account.
type Balance struct {
	Account  string
	Type     string          // Tp/CdOrPrtry/Cd: OPBD opening booked, CLBD closing booked, PRCD previously closed booked, ...
	Amount   decimal.Decimal // negative when CdtDbtInd is DBIT (the account is overdrawn)
	Currency string
	Date     string    // Dt/Dt (YYYY-MM-DD), when the balance has no time
	At       time.Time // Dt/DtTm, when it has one; zero otherwise
}

// File is what a camt file holds.
type File struct {
	Message  string // camt.054 or camt.053
	Credits  []Credit
	Entries  []Entry // booked debits and reversals
	Balances []Balance
	Skipped  []Skipped
}

// Parse reads a camt.054 or camt.053 document. Booked credit entries
// become Credits; debits, reversals and pending entries are Skipped, as is
// a credit with no reference of the bank's own (it could not be recorded
// once only). An entry whose amount or currency cannot be read fails the
// whole file: it is money the operator must look at, not something to skip.
func Parse(r io.Reader) (File, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxSize+1))
	if err != nil {
		return File{}, fmt.Errorf("read camt: %w", err)
	}
	if len(b) > MaxSize {
		return File{}, fmt.Errorf("read camt: larger than %d bytes", MaxSize)
	}
	var doc document
	if err := xml.Unmarshal(b, &doc); err != nil {
		return File{}, fmt.Errorf("read camt: %w", err)
	}
	var f File
	var accounts []account
	switch {
	case len(doc.Notification.Reports) > 0 && len(doc.Statement.Reports) == 0:
		f.Message, accounts = "camt.054", doc.Notification.Reports
	case len(doc.Statement.Reports) > 0 && len(doc.Notification.Reports) == 0:
		f.Message, accounts = "camt.053", doc.Statement.Reports
	default:
		return File{}, errors.New("read camt: not a camt.054 BkToCstmrDbtCdtNtfctn or camt.053 BkToCstmrStmt with one Ntfctn or Stmt at least")
	}
	for _, a := range accounts {
		acct := a.Account.ID.id()
		if acct == "" {
			return File{}, errors.New("read camt: an account without Id/IBAN or Id/Othr/Id")
		}
		for i, e := range a.Entries {
			credits, skip, err := e.credits(acct)
			if err != nil {
				return File{}, fmt.Errorf("read camt: entry %d of account %s: %w", i+1, acct, err)
			}
			f.Credits = append(f.Credits, credits...)
			if skip.Reason != "" {
				f.Skipped = append(f.Skipped, skip)
			}
			if other, ok := e.other(acct); ok {
				f.Entries = append(f.Entries, other)
			}
		}
		for i, b := range a.Balances {
			bal, err := b.read(acct)
			if err != nil {
				return File{}, fmt.Errorf("read camt: balance %d of account %s: %w", i+1, acct, err)
			}
			f.Balances = append(f.Balances, bal)
		}
	}
	return f, nil
}

// document is either message; the other's members stay empty.
type document struct {
	Notification struct {
		Reports []account `xml:"Ntfctn"`
	} `xml:"BkToCstmrDbtCdtNtfctn"`
	Statement struct {
		Reports []account `xml:"Stmt"`
	} `xml:"BkToCstmrStmt"`
}

type account struct {
	Account struct {
		ID accountID `xml:"Id"`
	} `xml:"Acct"`
	Entries  []entry   `xml:"Ntry"`
	Balances []balance `xml:"Bal"`
}

type balance struct {
	Type      string `xml:"Tp>CdOrPrtry>Cd"`
	Amount    amount `xml:"Amt"`
	Indicator string `xml:"CdtDbtInd"`
	Date      date   `xml:"Dt"`
}

// read is b as a Balance: a type code, a signed amount in a currency, and
// a date or a time.
func (b balance) read(acct string) (Balance, error) {
	d, cur, err := b.Amount.parse()
	if err != nil {
		return Balance{}, err
	}
	if d.IsNegative() {
		return Balance{}, fmt.Errorf("amount %q is not a decimal of at least zero", strings.TrimSpace(b.Amount.Value))
	}
	switch ind := strings.TrimSpace(b.Indicator); ind {
	case "DBIT":
		d = d.Neg()
	case "CRDT":
	default:
		return Balance{}, fmt.Errorf("CdtDbtInd %q is neither CRDT nor DBIT", ind)
	}
	bal := Balance{Account: acct, Type: strings.TrimSpace(b.Type), Amount: d, Currency: cur}
	if t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(b.Date.DateTime)); err == nil {
		bal.At = t.UTC()
	} else if day, err := time.Parse(time.DateOnly, strings.TrimSpace(b.Date.Date)); err == nil {
		bal.Date = day.Format(time.DateOnly)
	} else {
		return Balance{}, errors.New("no Dt/Dt or Dt/DtTm")
	}
	if bal.Type == "" {
		return Balance{}, errors.New("no Tp/CdOrPrtry/Cd")
	}
	return bal, nil
}

type accountID struct {
	IBAN  string `xml:"IBAN"`
	Other string `xml:"Othr>Id"`
}

func (a accountID) id() string { return cmp.Or(strings.TrimSpace(a.IBAN), strings.TrimSpace(a.Other)) }

type amount struct {
	Value    string `xml:",chardata"`
	Currency string `xml:"Ccy,attr"`
}

// status is Sts: a code as text up to version 2 of the messages' later
// releases, a Cd (or Prtry) element since.
type status struct {
	Text string `xml:",chardata"`
	Code string `xml:"Cd"`
}

func (s status) code() string { return cmp.Or(strings.TrimSpace(s.Code), strings.TrimSpace(s.Text)) }

type date struct {
	Date     string `xml:"Dt"`
	DateTime string `xml:"DtTm"`
}

func (d date) time() time.Time {
	if t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(d.DateTime)); err == nil {
		return t.UTC()
	}
	if t, err := time.Parse(time.DateOnly, strings.TrimSpace(d.Date)); err == nil {
		return t
	}
	return time.Time{}
}

type party struct {
	Name      string `xml:"Nm"`
	PartyName string `xml:"Pty>Nm"` // camt.054.001.08 and later
}

func (p party) name() string {
	return cmp.Or(strings.TrimSpace(p.Name), strings.TrimSpace(p.PartyName))
}

type transaction struct {
	AccountServicerRef string `xml:"Refs>AcctSvcrRef"`
	Amount             amount `xml:"Amt"`
	RelatedParties     struct {
		Debtor        party `xml:"Dbtr"`
		DebtorAccount struct {
			ID accountID `xml:"Id"`
		} `xml:"DbtrAcct"`
	} `xml:"RltdPties"`
	DebtorAgent string `xml:"RltdAgts>DbtrAgt>FinInstnId>Nm"`
	Remittance  struct {
		Unstructured []string `xml:"Ustrd"`
		Structured   []struct {
			CreditorRef string `xml:"CdtrRefInf>Ref"`
		} `xml:"Strd"`
	} `xml:"RmtInf"`
}

type entry struct {
	EntryRef           string        `xml:"NtryRef"`
	Amount             amount        `xml:"Amt"`
	Indicator          string        `xml:"CdtDbtInd"`
	Reversal           string        `xml:"RvslInd"`
	Status             status        `xml:"Sts"`
	Booking            date          `xml:"BookgDt"`
	AccountServicerRef string        `xml:"AcctSvcrRef"`
	Transactions       []transaction `xml:"NtryDtls>TxDtls"`
}

// ref is the bank's reference of e: AcctSvcrRef, else NtryRef.
func (e entry) ref() string {
	return cmp.Or(strings.TrimSpace(e.AccountServicerRef), strings.TrimSpace(e.EntryRef))
}

// credits returns e's credits, or why it has none.
func (e entry) credits(acct string) ([]Credit, Skipped, error) {
	ref := e.ref()
	total, cur, err := e.Amount.read()
	if err != nil {
		return nil, Skipped{}, err
	}
	switch ind := strings.TrimSpace(e.Indicator); {
	case ind == "DBIT":
		return nil, Skipped{EntryRef: ref, Reason: "a debit"}, nil
	case ind != "CRDT":
		return nil, Skipped{}, fmt.Errorf("CdtDbtInd %q is neither CRDT nor DBIT", ind)
	case strings.TrimSpace(e.Reversal) == "true":
		// A reversed debit (our own transfer coming back) is reported as a
		// credit: it is not a payer's deposit.
		return nil, Skipped{EntryRef: ref, Reason: "a reversal"}, nil
	case e.Status.code() != "" && e.Status.code() != "BOOK":
		return nil, Skipped{EntryRef: ref, Reason: "not booked (status " + e.Status.code() + ")"}, nil
	case ref == "":
		return nil, Skipped{Reason: fmt.Sprintf("a credit of %s %s without AcctSvcrRef or NtryRef", total, cur)}, nil
	}
	base := Credit{Account: acct, EntryRef: ref, Amount: total, Currency: cur, BookedAt: e.Booking.time()}
	if parts, ok := e.batch(base); ok {
		return parts, Skipped{}, nil
	}
	// One transfer, or a batch whose parts do not add up: one credit with
	// every reference, which then matches one payment or none.
	for _, t := range e.Transactions {
		base.addDetails(t)
	}
	return []Credit{base}, Skipped{}, nil
}

// other returns e as an Entry when it is booked and not a payer's credit:
// a debit, or a reversal. Its amount was read by credits, which failed
// the file if it could not be.
func (e entry) other(acct string) (Entry, bool) {
	ind := strings.TrimSpace(e.Indicator)
	reversal := strings.TrimSpace(e.Reversal) == "true"
	if ind != "DBIT" && !reversal || e.Status.code() != "" && e.Status.code() != "BOOK" {
		return Entry{}, false
	}
	ref := e.ref()
	total, cur, err := e.Amount.read()
	if err != nil || ref == "" {
		return Entry{}, false
	}
	return Entry{Account: acct, EntryRef: ref, Amount: total, Currency: cur, Debit: ind == "DBIT", Reversal: reversal,
		BookedAt: e.Booking.time()}, true
}

// batch splits an entry of several transactions into one credit each,
// when each has its own amount in the entry's currency and they add up to
// the entry's.
func (e entry) batch(base Credit) ([]Credit, bool) {
	if len(e.Transactions) < 2 {
		return nil, false
	}
	out := make([]Credit, 0, len(e.Transactions))
	sum := decimal.Zero
	for i, t := range e.Transactions {
		a, cur, err := t.Amount.read()
		if err != nil || cur != base.Currency {
			return nil, false
		}
		c := base
		c.Amount, c.References, sum = a, nil, sum.Add(a)
		c.EntryRef = fmt.Sprintf("%s/%d", base.EntryRef, i+1)
		if r := strings.TrimSpace(t.AccountServicerRef); r != "" {
			c.EntryRef = base.EntryRef + "/" + r
		}
		c.addDetails(t)
		out = append(out, c)
	}
	return out, sum.Equal(base.Amount)
}

// addDetails takes t's payer and references into c.
func (c *Credit) addDetails(t transaction) {
	if c.DebtorName == "" {
		c.DebtorName = t.RelatedParties.Debtor.name()
	}
	if c.DebtorIBAN == "" {
		c.DebtorIBAN = t.RelatedParties.DebtorAccount.ID.id()
	}
	if c.DebtorBank == "" {
		c.DebtorBank = strings.TrimSpace(t.DebtorAgent)
	}
	refs := append([]string(nil), t.Remittance.Unstructured...)
	for _, s := range t.Remittance.Structured {
		refs = append(refs, s.CreditorRef)
	}
	for _, r := range refs {
		if r = strings.TrimSpace(r); r != "" && !slices.Contains(c.References, r) {
			c.References = append(c.References, r)
		}
	}
}

// read is a's amount and currency: a positive decimal and three letters.
func (a amount) read() (decimal.Decimal, string, error) {
	d, cur, err := a.parse()
	if err != nil {
		return decimal.Decimal{}, "", err
	}
	if !d.IsPositive() {
		return decimal.Decimal{}, "", fmt.Errorf("amount %q is not a positive decimal", strings.TrimSpace(a.Value))
	}
	return d, cur, nil
}

// parse is a's amount and currency: a decimal without an exponent, of
// either sign, and three letters.
func (a amount) parse() (decimal.Decimal, string, error) {
	v := strings.TrimSpace(a.Value)
	d, err := decimal.NewFromString(v)
	if err != nil || strings.ContainsAny(v, "eE") {
		return decimal.Decimal{}, "", fmt.Errorf("amount %q is not a decimal", v)
	}
	cur := strings.TrimSpace(a.Currency)
	if len(cur) != 3 || !isLetters(cur) {
		return decimal.Decimal{}, "", fmt.Errorf("currency %q is not an ISO 4217 code", cur)
	}
	return d, cur, nil
}

func isLetters(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return r < 'A' || r > 'Z' }) < 0
}
