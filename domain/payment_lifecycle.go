package domain

import (
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

// The payment lifecycle (spec §3.1, contract §6): funds arrive (partial
// deposits keep the payment created until the amount due is covered), the
// payment is deposited, converted at the price of that moment and its
// payout intent recorded (transferring) before the payout rail is called
// with the payment id as idempotency key, then success or failed. A
// payment still created when its validity ends expires. Every step is an
// event on the payment's stream carrying its statusLog message.

// DocumentsThreshold is the South African amount above which a payment
// waits in deposited for a supporting document (spec §8).
const DocumentsThreshold = 50_000

// Change refund statuses (changeRefundStatus).
const (
	ChangeNone    = "none"    // no unused buffer
	ChangePending = "pending" // unused buffer owed to the payer, in sats
)

// PaymentDepositReceived records funds that do not cover the amount due
// yet: the payment stays created and keeps waiting.
type PaymentDepositReceived struct {
	Amount   decimal.Decimal `json:"amount"`                  // this deposit, in the deposit currency
	Total    decimal.Decimal `json:"total"`                   // deposited so far
	Source   *DepositSource  `json:"source,omitempty"`        // where a bank transfer's funds came from; nil for the other rails
	Payer    *Payer          `json:"payer" ledger:"personal"` // who paid, as the rail reported them; nil when it did not
	Postings []Posting       `json:"postings,omitempty"`      // double entry, balanced per currency
	Message  string          `json:"message"`
	At       time.Time       `json:"at"`
	Ref      string          `json:"ref,omitempty"` // the provider's id of the transfer it counts (RecordDeposit.Ref)
}

// PaymentDeposited records that the funds cover the amount due (status
// deposited). Held is true when the payment waits for a supporting document.
type PaymentDeposited struct {
	Amount   decimal.Decimal `json:"amount"`
	Total    decimal.Decimal `json:"total"`
	Held     bool            `json:"held"`
	Source   *DepositSource  `json:"source,omitempty"`        // where a bank transfer's funds came from; nil for the other rails
	Payer    *Payer          `json:"payer" ledger:"personal"` // who paid, as the rail reported them; nil when it did not
	Postings []Posting       `json:"postings,omitempty"`      // double entry, balanced per currency
	Message  string          `json:"message"`
	At       time.Time       `json:"at"`
	Ref      string          `json:"ref,omitempty"` // the provider's id of the transfer it counts (RecordDeposit.Ref)
}

// PaymentTransferring records the conversion and the payout intent (status
// transferring), appended before the payout rail is called so that a crash
// after the call finds the intent and repeats the call with the same
// idempotency key instead of paying again.
type PaymentTransferring struct {
	AmountSats         int64           `json:"amountSats"`
	BTCPrice           decimal.Decimal `json:"btcPrice"`
	ChangeRefundSats   int64           `json:"changeRefundSats"`
	ChangeRefundStatus string          `json:"changeRefundStatus"`
	PayoutAmount       decimal.Decimal `json:"payoutAmount"` // in PayoutCurrency (sats for Lightning)
	PayoutCurrency     string          `json:"payoutCurrency"`
	PayoutRail         string          `json:"payoutRail"`         // BANK, MOMO or LIGHTNING
	IdempotencyKey     string          `json:"idempotencyKey"`     // the payment id: what the rail de-duplicates by
	Postings           []Posting       `json:"postings,omitempty"` // double entry, balanced per currency
	Message            string          `json:"message"`
	At                 time.Time       `json:"at"`
}

// PaymentSucceeded records the rail's confirmation (status success).
type PaymentSucceeded struct {
	AmountSettled decimal.Decimal `json:"amountSettled"`
	PayoutID      string          `json:"payoutId"`
	ResolvedBy    string          `json:"resolvedBy,omitempty"` // the operator who recorded it, when no provider could
	Postings      []Posting       `json:"postings,omitempty"`   // double entry, balanced per currency
	Message       string          `json:"message"`
	At            time.Time       `json:"at"`
}

// PaymentFailed records a payout the rail rejected (status failed).
type PaymentFailed struct {
	Reason     string    `json:"reason"`
	ResolvedBy string    `json:"resolvedBy,omitempty"` // the operator who recorded it, when no provider could
	Postings   []Posting `json:"postings,omitempty"`   // double entry, balanced per currency
	Message    string    `json:"message"`
	At         time.Time `json:"at"`
}

// PaymentPayoutReversed records that a payout the rail had confirmed came
// back (the recipient's bank reversed the transfer). The status stays
// success: what was owed to the recipient is owed again (the postings move
// it back to payout_payable), and an operator decides whether to pay it
// again or return it.
type PaymentPayoutReversed struct {
	PayoutID string    `json:"payoutId"`
	Reason   string    `json:"reason"`
	Postings []Posting `json:"postings,omitempty"` // double entry, balanced per currency
	Message  string    `json:"message"`
	At       time.Time `json:"at"`
}

// PaymentExpired records the end of a payment's validity while it was
// still created (status expired).
type PaymentExpired struct {
	Postings []Posting `json:"postings,omitempty"` // double entry, balanced per currency
	Message  string    `json:"message"`
	At       time.Time `json:"at"`
}

func (PaymentDepositReceived) EventType() string { return "payment.deposit_received" }
func (PaymentDeposited) EventType() string       { return "payment.deposited" }
func (PaymentTransferring) EventType() string    { return "payment.transferring" }
func (PaymentSucceeded) EventType() string       { return "payment.success" }
func (PaymentFailed) EventType() string          { return "payment.failed" }
func (PaymentExpired) EventType() string         { return "payment.expired" }
func (PaymentPayoutReversed) EventType() string  { return "payment.payout_reversed" }

var (
	_ = register(EventDef{Type: "payment.deposit_received", Version: 1, New: func() Event { return new(PaymentDepositReceived) },
		Doc: "Funds arrived that do not cover the amount due yet; the payment stays created."})
	_ = register(EventDef{Type: "payment.deposited", Version: 1, New: func() Event { return new(PaymentDeposited) },
		Doc: "The funds cover the amount due (status deposited); held when a supporting document is required first."})
	_ = register(EventDef{Type: "payment.transferring", Version: 1, New: func() Event { return new(PaymentTransferring) },
		Doc: "Converted at the price of the moment; the payout intent is recorded before the rail is called (status transferring)."})
	_ = register(EventDef{Type: "payment.success", Version: 1, New: func() Event { return new(PaymentSucceeded) },
		Doc: "The payout rail confirmed the payout (status success)."})
	_ = register(EventDef{Type: "payment.failed", Version: 1, New: func() Event { return new(PaymentFailed) },
		Doc: "The payout rail rejected the payout (status failed); the message says why."})
	_ = register(EventDef{Type: "payment.expired", Version: 1, New: func() Event { return new(PaymentExpired) },
		Doc: "The payment's validity ended before it was funded (status expired)."})
	_ = register(EventDef{Type: "payment.payout_reversed", Version: 1, New: func() Event { return new(PaymentPayoutReversed) },
		Doc: "A confirmed payout came back (the recipient's bank reversed it); the status stays success and an operator must act."})
)

// StatusOf returns the status an event moves a payment to, or "" for
// events that do not change it.
func StatusOf(e Event) string {
	switch e.(type) {
	case PaymentCreated:
		return StatusCreated
	case PaymentDeposited:
		return StatusDeposited
	case PaymentTransferring:
		return StatusTransferring
	case PaymentSucceeded:
		return StatusSuccess
	case PaymentFailed:
		return StatusFailed
	case PaymentExpired:
		return StatusExpired
	}
	return ""
}

// applyLifecycle folds a lifecycle event into p.
func applyLifecycle(p Payment, e Event) Payment {
	switch e := e.(type) {
	case PaymentDepositReceived:
		p.AmountDeposited, p.StatusLog, p.UpdatedAt = e.Total, e.Message, e.At
		p.DepositRefs, p.Payer = withRef(p.DepositRefs, e.Ref), withPayer(p.Payer, e.Payer)
		return p
	case PaymentDeposited:
		p.AmountDeposited, p.Status, p.StatusLog, p.HeldForDocuments, p.UpdatedAt = e.Total, StatusDeposited, e.Message, e.Held, e.At
		p.DepositRefs, p.Payer = withRef(p.DepositRefs, e.Ref), withPayer(p.Payer, e.Payer)
	case PaymentTransferring:
		sats, change := e.AmountSats, e.ChangeRefundSats
		p.Status, p.StatusLog, p.AmountSats, p.BTCPrice, p.PayoutAmount = StatusTransferring, e.Message, &sats, e.BTCPrice, e.PayoutAmount
		p.ChangeRefundSats, p.ChangeRefundStatus, p.HeldForDocuments, p.UpdatedAt = &change, e.ChangeRefundStatus, false, e.At
		p.ChangeDue = credited(e.Postings, AccountChange)
	case PaymentSucceeded:
		settled := e.AmountSettled
		p.Status, p.StatusLog, p.AmountSettled, p.UpdatedAt = StatusSuccess, e.Message, &settled, e.At
	case PaymentFailed:
		p.Status, p.StatusLog, p.UpdatedAt = StatusFailed, e.Message, e.At
	case PaymentExpired:
		p.Status, p.StatusLog, p.UpdatedAt = StatusExpired, e.Message, e.At
	case PaymentPayoutReversed:
		at := e.At
		p.StatusLog, p.PayoutReversedAt, p.UpdatedAt = e.Message, &at, e.At
	default:
		return p
	}
	p.StatusLogs = append(slices.Clip(p.StatusLogs), StatusLogEntry{Status: p.Status, Message: p.StatusLog, At: p.UpdatedAt})
	return p
}

// DepositUnits converts n, counted as the payment's funding details count
// (sats for Lightning, cents for a bank transfer or USDT, whole units for
// a momo push), to DepositCurrency units.
func (p Payment) DepositUnits(n int64) decimal.Decimal {
	if p.Funding == FundingBankTransfer || p.Funding == FundingUSDT {
		return decimal.New(n, -2)
	}
	return decimal.NewFromInt(n)
}

// Outstanding is what remains to deposit, in DepositCurrency.
func (p Payment) Outstanding() decimal.Decimal { return p.DepositDue.Sub(p.AmountDeposited) }

// needsDocuments tells whether p must wait for a supporting document.
func (p Payment) needsDocuments() bool {
	return p.DestinationCountry == CountrySouthAfrica && p.DestinationAmount.GreaterThan(decimal.NewFromInt(DocumentsThreshold)) &&
		p.Documents == 0
}

// AwaitsPayout tells whether p's next step is its conversion and payout
// (DecideBeginPayout): deposited and not waiting for a supporting document.
// HeldForDocuments is not the answer: it says the payment waited when its
// deposit arrived and stays true, once a document has ended the wait,
// until the conversion clears it. In the read model's terms: status
// deposited and not (heldForDocuments and documents = 0).
func (p Payment) AwaitsPayout() bool { return p.Status == StatusDeposited && !p.needsDocuments() }

// ConvertedAt is when p was converted and its payout began (its
// transferring status line), or the zero time if it never was. Not
// UpdatedAt, which a document attached later moves too.
func (p Payment) ConvertedAt() time.Time {
	for i := len(p.StatusLogs) - 1; i >= 0; i-- {
		if p.StatusLogs[i].Status == StatusTransferring {
			return p.StatusLogs[i].At
		}
	}
	return time.Time{}
}

// RecordDeposit is funds arriving for a payment (a paid invoice, a bank
// deposit, a confirmed push, a USDT transfer), in its DepositCurrency.
type RecordDeposit struct {
	Amount decimal.Decimal
	Now    time.Time
	// InvoiceSettled says the Lightning node settled the payment's
	// invoice: the funds count whatever Now (the node's settle time) says
	// of ExpiresAt. The node settles only an invoice that has not expired
	// by its own clock, its invoice's expiry is the payment's validity
	// (stamped in whole seconds by the node as the payment is created, so
	// the two end within a second of each other), and the expiry worker
	// cancels the invoice at the node before it expires the payment: a
	// settled invoice of a payment still created was paid in time, and
	// refusing it would keep money received and leave the payment created
	// for good. A paid M-Pesa prompt counts the same way: it was made for
	// this payment, and the expiry worker asks how it ended before it
	// expires the payment.
	InvoiceSettled bool
	// Source says which bank credit, or which unmatched funds an operator
	// assigned, the deposit is: nil for the other rails.
	Source *DepositSource
	// Payer is who paid, as the rail reported them (a bank credit's
	// debtor, the phone a prompt was paid from); nil when it did not.
	Payer *Payer
	// Ref is the provider's id of the transfer: "<tx hash>:<log index>"
	// of a USDT Transfer log, an M-Pesa receipt, a sandbox deposit's id.
	// A payment counts each one once, so a watcher that sees it again (a
	// restart, another process) decides nothing, and reconciliation
	// matches the deposit to the provider's record by it.
	Ref string
}

// DepositSource is the origin of a bank-transfer deposit: the bank's entry
// (recorded once: a re-sent entry is refused by the bank_credits read
// model's unique key in the same transaction), or the unmatched funds an
// operator assigned to the payment.
type DepositSource struct {
	Entry       *BankEntry `json:"entry,omitempty"`
	UnmatchedID *uuid.UUID `json:"unmatchedFundsId,omitempty"`
}

// withPayer is the payer a payment keeps: the first a rail reported (the
// deposits of one payment come from one payer; a later one that names
// another is not the one to pay back without a person deciding).
func withPayer(kept, reported *Payer) *Payer {
	if kept != nil {
		return kept
	}
	return reported
}

// withRef appends a deposit's chain transfer to refs, copying so that
// folds never share a backing array.
func withRef(refs []string, ref string) []string {
	if ref == "" {
		return refs
	}
	return append(slices.Clip(refs), ref)
}

var errNotAwaitingFunds = func(p Payment) error {
	return Errorf(Conflict, "payment_not_awaiting_funds", "the payment is %s, not awaiting funds", p.Status)
}

// DecideDeposit records funds for p: deposited once they cover the amount
// due (held for a document above ZAR 50,000 without one), otherwise a
// partial deposit that keeps the payment waiting. Only a created payment
// takes funds (409 otherwise); a chain transfer already counted decides
// nothing.
func DecideDeposit(p Payment, c RecordDeposit) ([]Event, error) {
	if c.Ref != "" && slices.Contains(p.DepositRefs, c.Ref) {
		return nil, nil
	}
	if p.Status != StatusCreated {
		return nil, errNotAwaitingFunds(p)
	}
	if !c.InvoiceSettled && !c.Now.Before(p.ExpiresAt) {
		return nil, Errorf(Conflict, "payment_expired", "the payment's validity ended at %s", p.ExpiresAt.Format(TimeFormat))
	}
	if !c.Amount.IsPositive() {
		return nil, Invalidf("amount", "must be greater than 0")
	}
	at := c.Now.UTC().Truncate(time.Millisecond)
	total := p.AmountDeposited.Add(c.Amount)
	received := FormatAmount(total, p.DepositCurrency)
	if total.LessThan(p.DepositDue) {
		return []Event{PaymentDepositReceived{Amount: c.Amount, Total: total, At: at, Source: c.Source, Payer: c.Payer, Postings: depositPostings(p, c.Amount), Ref: c.Ref,
			Message: fmt.Sprintf("Received %s of %s; awaiting the rest", received, FormatAmount(p.DepositDue, p.DepositCurrency))}}, nil
	}
	e := PaymentDeposited{Amount: c.Amount, Total: total, At: at, Source: c.Source, Payer: c.Payer, Postings: depositPostings(p, c.Amount), Ref: c.Ref,
		Message: fmt.Sprintf("Received %s; converting", received)}
	if p.needsDocuments() {
		e.Held = true
		e.Message = fmt.Sprintf("Received %s; awaiting supporting documents (South African payments above ZAR 50,000)", received)
	}
	return []Event{e}, nil
}

// BeginPayout is the lifecycle worker's step after a deposit (or after the
// document a held payment waited for): convert at prices and record the
// payout intent.
type BeginPayout struct {
	Prices     BTCPrices
	OTCFeeRate decimal.Decimal
	Now        time.Time
}

// DecideBeginPayout converts a deposited payment at the price of now and
// records its payout intent (payment.transferring). Anything else (not
// deposited, still held) decides nothing: the worker may see the same
// message twice. What the deposit is worth now beyond what the amount and
// fees cost now (the unused buffer, and any move of the prices in the
// payer's favour) is the change owed to the payer, in sats, and booked in
// the deposit's currency; when the prices moved so far that the deposit
// falls short, the merchant is still paid in full and the change is zero.
// A USDT payment pays out what the USDT received is worth now, less fees
// (QuotePayment's USDT rule): it has no change.
func DecideBeginPayout(p Payment, c BeginPayout) ([]Event, error) {
	if p.Status != StatusDeposited || p.needsDocuments() {
		return nil, nil
	}
	e := PaymentTransferring{ChangeRefundStatus: ChangeNone, PayoutAmount: decimal.NewFromInt(p.Amount),
		PayoutCurrency: p.DestinationCurrency, PayoutRail: p.PayoutMethod, IdempotencyKey: p.ID.String(),
		At: c.Now.UTC().Truncate(time.Millisecond)}
	fees, change := p.OTCFees, decimal.Zero
	switch {
	case p.Funding == FundingUSDT:
		q, err := QuotePayment(QuoteInput{FromCurrency: "USDT", DestinationCurrency: p.DestinationCurrency,
			Amount: p.converted().Shift(2).IntPart(), OTCFeeRate: c.OTCFeeRate, Prices: c.Prices})
		if err != nil {
			return nil, err
		}
		e.AmountSats, e.BTCPrice, e.PayoutAmount, fees = q.AmountSats, q.BTCPrice, q.DestinationAmount, q.OTCFees
	default:
		need := decimal.NewFromInt(p.Amount).Add(p.OTCFees) // sats, for a Lightning merchant
		e.BTCPrice = p.BTCPrice
		if p.DestinationCurrency != "BTC" {
			price, err := c.Prices.price(p.DestinationCurrency)
			if err != nil {
				return nil, err
			}
			need, e.BTCPrice = ceilQuo(need.Shift(satsExp), price), price
		}
		e.AmountSats = need.IntPart()
		worth, err := p.convertedSats(c.Prices)
		if err != nil {
			return nil, err
		}
		if sats := worth.Sub(need); sats.IsPositive() {
			if change, err = p.inDepositCurrency(sats, c.Prices); err != nil {
				return nil, err
			}
			if change.IsPositive() { // a surplus worth less than the deposit's unit is no change
				e.ChangeRefundSats, e.ChangeRefundStatus = sats.IntPart(), ChangePending
			}
		}
	}
	e.Message = fmt.Sprintf("Converted; paying out %s by %s", FormatAmount(e.PayoutAmount, p.DestinationUnit()), p.PayoutMethod)
	if over := p.overpaid(); over.IsPositive() {
		e.Message += fmt.Sprintf("; %s received over the amount due is owed back to the payer", FormatAmount(over, p.DepositCurrency))
	}
	e.Postings = conversionPostings(p, e, fees, change)
	return []Event{e}, nil
}

// overpaid is what a payment funded by bank transfer, mobile money or USDT
// received over its amount due. It is not converted (the merchant's payout
// and the corridor's limits and document rule were decided on the amount
// due) but owed back to the payer. A Lightning payment has none: every sat
// beyond what the payout costs at conversion is its change.
func (p Payment) overpaid() decimal.Decimal {
	if p.Funding == FundingLightning {
		return decimal.Zero
	}
	return decimal.Max(p.AmountDeposited.Sub(p.DepositDue), decimal.Zero)
}

// converted is the part of the deposits the conversion takes.
func (p Payment) converted() decimal.Decimal { return p.AmountDeposited.Sub(p.overpaid()) }

// depositPrice is the price of 1 BTC in p's deposit currency: 10^8 when
// the deposit is sats.
func (p Payment) depositPrice(prices BTCPrices) (decimal.Decimal, error) {
	if p.Funding == FundingLightning {
		return decimal.New(1, satsExp), nil
	}
	return prices.price(p.DepositCurrency)
}

// convertedSats is what the converted deposit is worth in sats at prices,
// rounded down.
func (p Payment) convertedSats(prices BTCPrices) (decimal.Decimal, error) {
	price, err := p.depositPrice(prices)
	if err != nil {
		return decimal.Decimal{}, err
	}
	sats, _ := p.converted().Shift(satsExp).QuoRem(price, 0)
	return sats, nil
}

// inDepositCurrency is sats in p's deposit currency at prices, rounded
// down to what its rail moves: whole sats for Lightning, whole shillings
// for M-Pesa (as its deposit due), else the minor unit.
func (p Payment) inDepositCurrency(sats decimal.Decimal, prices BTCPrices) (decimal.Decimal, error) {
	price, err := p.depositPrice(prices)
	if err != nil {
		return decimal.Decimal{}, err
	}
	places := int32(minorPlaces)
	if p.Funding == FundingLightning || p.Funding == FundingMomo {
		places = 0
	}
	return sats.Mul(price).Shift(-satsExp).RoundFloor(places), nil
}

// PayoutResult is what the payout rail answered.
type PayoutResult struct {
	PayoutID string
	Rejected bool
	Reason   string
	Now      time.Time
}

// DecidePayoutResult ends a transferring payment: success with
// amountSettled, or failed with the rail's reason. A payment no longer
// transferring (the same result seen twice) decides nothing.
func DecidePayoutResult(p Payment, r PayoutResult) ([]Event, error) {
	if p.Status != StatusTransferring {
		return nil, nil
	}
	at := r.Now.UTC().Truncate(time.Millisecond)
	if r.Rejected {
		return []Event{PaymentFailed{Reason: r.Reason, At: at, Message: "Payout rejected: " + r.Reason,
			Postings: failurePostings(p)}}, nil
	}
	return []Event{PaymentSucceeded{AmountSettled: p.PayoutAmount, PayoutID: r.PayoutID, At: at, Postings: settlementPostings(p),
		Message: fmt.Sprintf("Settled %s to the recipient", FormatAmount(p.PayoutAmount, p.DestinationUnit()))}}, nil
}

// PayoutReversal is the rail's report that a confirmed payout came back.
type PayoutReversal struct {
	PayoutID string
	Reason   string
	Now      time.Time
}

// DecidePayoutReversal records the reversal of p's payout. Only a success
// can be reversed, once: a repeated report decides nothing.
func DecidePayoutReversal(p Payment, r PayoutReversal) ([]Event, error) {
	if p.Status != StatusSuccess || p.PayoutReversedAt != nil {
		return nil, nil
	}
	return []Event{PaymentPayoutReversed{PayoutID: r.PayoutID, Reason: r.Reason, At: r.Now.UTC().Truncate(time.Millisecond),
		Postings: reversalPostings(p), Message: "Payout reversed by the recipient's bank: " + r.Reason}}, nil
}

// DecideExpire expires p if it is still created at now, past its validity.
func DecideExpire(p Payment, now time.Time) ([]Event, error) {
	if p.Status != StatusCreated || now.Before(p.ExpiresAt) {
		return nil, nil
	}
	msg := "Expired: the payment's validity ended before it was funded"
	if p.AmountDeposited.IsPositive() {
		msg = fmt.Sprintf("Expired with %s of %s deposited; the deposit is returned to the payer",
			FormatAmount(p.AmountDeposited, p.DepositCurrency), FormatAmount(p.DepositDue, p.DepositCurrency))
	}
	return []Event{PaymentExpired{Message: msg, At: now.UTC().Truncate(time.Millisecond), Postings: expiryPostings(p)}}, nil
}
