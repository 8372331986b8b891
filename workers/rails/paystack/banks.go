package paystack

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
)

// countries maps a payout currency to its Paystack country query value
// and the recipient type of its bank accounts
// (https://paystack.com/docs/transfers/creating-transfer-recipients/).
var countries = map[string]struct{ query, recipientType string }{
	"ZAR": {"south africa", "basa"},
	"NGN": {"nigeria", "nuban"},
	"KES": {"kenya", "kepss"},
}

// bankListAge is how long a country's bank list is reused: banks are added
// or renamed a few times a year, and a merchant naming a new bank waits
// at most this long.
const bankListAge = time.Hour

// BankList is Paystack's bank list per currency, fetched once an hour.
type BankList struct {
	client *Client
	now    func() time.Time
	mu     sync.Mutex
	lists  map[string]bankCache
}

type bankCache struct {
	banks []Bank
	at    time.Time
}

// NewBankList returns the bank lists client fetches.
func NewBankList(client *Client) *BankList {
	return &BankList{client: client, now: time.Now, lists: map[string]bankCache{}}
}

// Banks lists the active banks of currency's country.
func (b *BankList) Banks(ctx context.Context, currency string) ([]Bank, error) {
	c, ok := countries[currency]
	if !ok {
		return nil, fmt.Errorf("paystack: no bank payouts in %s", currency)
	}
	b.mu.Lock()
	cached, ok := b.lists[currency]
	b.mu.Unlock()
	if ok && b.now().Sub(cached.at) < bankListAge {
		return cached.banks, nil
	}
	all, err := b.client.Banks(ctx, c.query)
	if err != nil {
		return nil, fmt.Errorf("paystack: bank list of %s: %w", c.query, err)
	}
	banks := make([]Bank, 0, len(all))
	for _, bank := range all {
		if bank.Active {
			banks = append(banks, bank)
		}
	}
	b.mu.Lock()
	b.lists[currency] = bankCache{banks: banks, at: b.now()}
	b.mu.Unlock()
	return banks, nil
}

// Bank finds the bank named name (case aside) in currency's country.
func (b *BankList) Bank(ctx context.Context, currency, name string) (Bank, bool, error) {
	banks, err := b.Banks(ctx, currency)
	if err != nil {
		return Bank{}, false, err
	}
	for _, bank := range banks {
		if strings.EqualFold(bank.Name, name) {
			return bank, true, nil
		}
	}
	return Bank{}, false, nil
}
