package domain

import (
	"fmt"
	"strings"

	"github.com/shopspring/decimal"
)

// Posting is one line of a double-entry journal entry carried by a money
// event: an account, a currency ("sats" for Bitcoin), a side and a positive
// amount. Every event's debits equal its credits in each currency.
type Posting struct {
	Account  string          `json:"account"`
	Currency string          `json:"currency"`
	Side     string          `json:"side"` // debit or credit
	Amount   decimal.Decimal `json:"amount"`
}

// Posting sides.
const (
	Debit  = "debit"
	Credit = "credit"
)

// The tenant's ledger accounts. Asset accounts (external:*) hold what sits
// at a rail; the others are what the service owes or earned.
//
//	external:<rail>        money at a rail: LIGHTNING, BANK_TRANSFER, MOMO, USDT in; BANK, MOMO, LIGHTNING out
//	customer_funds         deposits held for payments not yet converted
//	conversion             the FX position a conversion passes through (sats in, fiat out)
//	payout_payable         converted amounts owed to recipients until the payout settles
//	fees:otc               OTC fees earned
//	change_payable         unused buffer owed back to payers
//	refunds_payable        deposits owed back to payers (expired or failed payments, unmatched funds marked for return)
//	suspense:unmatched_funds  money received that no payment took, until an operator assigns or returns it
const (
	AccountCustomerFunds = "customer_funds"
	AccountConversion    = "conversion"
	AccountPayoutPayable = "payout_payable"
	AccountFees          = "fees:otc"
	AccountChange        = "change_payable"
	AccountRefunds       = "refunds_payable"
)

// ExternalAccount is the account of money at a rail.
func ExternalAccount(rail string) string { return "external:" + rail }

// journal builds balanced postings.
type journal []Posting

func (j *journal) move(currency string, amount decimal.Decimal, debit, credit string) {
	if !amount.IsPositive() {
		return
	}
	*j = append(*j, Posting{Account: debit, Currency: currency, Side: Debit, Amount: amount},
		Posting{Account: credit, Currency: currency, Side: Credit, Amount: amount})
}

// CheckBalanced returns an error unless debits equal credits per currency
// and every amount is positive.
func CheckBalanced(ps []Posting) error {
	sums := map[string]decimal.Decimal{}
	for _, p := range ps {
		if !p.Amount.IsPositive() {
			return fmt.Errorf("posting to %s: amount %s is not positive", p.Account, p.Amount)
		}
		switch p.Side {
		case Debit:
			sums[p.Currency] = sums[p.Currency].Add(p.Amount)
		case Credit:
			sums[p.Currency] = sums[p.Currency].Sub(p.Amount)
		default:
			return fmt.Errorf("posting to %s: side %q", p.Account, p.Side)
		}
	}
	var off []string
	for cur, d := range sums {
		if !d.IsZero() {
			off = append(off, fmt.Sprintf("%s off by %s", cur, d))
		}
	}
	if len(off) > 0 {
		return fmt.Errorf("unbalanced: %s", strings.Join(off, ", "))
	}
	return nil
}

// PostingsOf returns the postings an event carries (nil for events that
// move no money).
func PostingsOf(e Event) []Posting {
	switch e := e.(type) {
	case PaymentDepositReceived:
		return e.Postings
	case PaymentDeposited:
		return e.Postings
	case PaymentTransferring:
		return e.Postings
	case PaymentSucceeded:
		return e.Postings
	case PaymentFailed:
		return e.Postings
	case PaymentExpired:
		return e.Postings
	case PaymentPayoutReversed:
		return e.Postings
	case PaymentChangeRefunded:
		return e.Postings
	case PaymentChangeRefundQueued:
		return e.Postings
	case UnmatchedFundsReceived:
		return e.Postings
	case UnmatchedFundsAssigned:
		return e.Postings
	case UnmatchedFundsReturnRequested:
		return e.Postings
	case UnmatchedFundsReturned:
		return e.Postings
	}
	return nil
}

// credited is what ps credit to account, or nil when they credit nothing.
func credited(ps []Posting, account string) *decimal.Decimal {
	var sum *decimal.Decimal
	for _, p := range ps {
		if p.Account == account && p.Side == Credit {
			s := p.Amount
			if sum != nil {
				s = s.Add(*sum)
			}
			sum = &s
		}
	}
	return sum
}

// depositPostings: funds arrive at the funding rail and are held for the payment.
func depositPostings(p Payment, amount decimal.Decimal) []Posting {
	var j journal
	j.move(p.DepositCurrency, amount, ExternalAccount(p.Funding), AccountCustomerFunds)
	return j
}

// conversionPostings: the deposit leaves customer funds for the conversion
// (less the change owed back, in the deposit's currency), and the
// conversion yields the payout and the fees charged on it in the
// destination currency (a USDT payment's are those of its price at
// conversion, not the quote's estimate in its otcFees).
func conversionPostings(p Payment, e PaymentTransferring, fees, change decimal.Decimal) []Posting {
	var j journal
	j.move(p.DepositCurrency, p.converted().Sub(change), AccountCustomerFunds, AccountConversion)
	j.move(p.DepositCurrency, change, AccountCustomerFunds, AccountChange)
	j.move(p.DepositCurrency, p.overpaid(), AccountCustomerFunds, AccountRefunds)
	j.move(p.DestinationUnit(), e.PayoutAmount.Add(fees), AccountConversion, AccountPayoutPayable)
	j.move(p.DestinationUnit(), fees, AccountPayoutPayable, AccountFees)
	return j
}

// DestinationUnit is the currency the merchant's amounts count in: "sats"
// for a Lightning merchant, else its currency code.
func (p Payment) DestinationUnit() string { return merchantUnit(p.DestinationCurrency) }

// settlementPostings: the payout leaves through the payout rail.
func settlementPostings(p Payment) []Posting {
	var j journal
	j.move(p.DestinationUnit(), p.PayoutAmount, AccountPayoutPayable, ExternalAccount(p.PayoutMethod))
	return j
}

// reversalPostings: a reversed payout comes back from the rail and is owed
// to the recipient again.
func reversalPostings(p Payment) []Posting {
	var j journal
	j.move(p.DestinationUnit(), p.PayoutAmount, ExternalAccount(p.PayoutMethod), AccountPayoutPayable)
	return j
}

// failurePostings: a rejected payout is owed back to the payer.
func failurePostings(p Payment) []Posting {
	var j journal
	j.move(p.DestinationUnit(), p.PayoutAmount, AccountPayoutPayable, AccountRefunds)
	return j
}

// expiryPostings: a partial deposit of an expired payment is owed back.
func expiryPostings(p Payment) []Posting {
	var j journal
	j.move(p.DepositCurrency, p.AmountDeposited, AccountCustomerFunds, AccountRefunds)
	return j
}
