package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/domain"
)

// Ledger is the double-entry postings read model.
type Ledger interface {
	TrialBalance(ctx context.Context, tenantID uuid.UUID, asOf time.Time) ([]domain.AccountBalance, error)
}

type balanceBody struct {
	Account  string          `json:"account"`
	Currency string          `json:"currency"`
	Debits   json.RawMessage `json:"debits"`
	Credits  json.RawMessage `json:"credits"`
	Balance  json.RawMessage `json:"balance"` // debits - credits
}

type currencyTotals struct {
	Currency string          `json:"currency"`
	Debits   json.RawMessage `json:"debits"`
	Credits  json.RawMessage `json:"credits"`
	Balanced bool            `json:"balanced"`
}

// trialBalance is GET /ledger/balances?asOf= (tenant token): every
// account's debits, credits and balance from the postings recorded up to
// asOf (default now), with each currency's totals, which balance.
func (s *Server) trialBalance(w http.ResponseWriter, r *http.Request) error {
	c, err := tenantCaller(r)
	if err != nil {
		return err
	}
	asOf := s.now().UTC()
	if v := r.URL.Query().Get("asOf"); v != "" {
		if asOf, err = time.Parse(time.RFC3339Nano, v); err != nil {
			return domain.Invalidf("asOf", "must be an ISO 8601 timestamp such as 2026-11-22T10:15:30.123Z")
		}
	}
	rows, err := s.ledger.TrialBalance(r.Context(), c.TenantID, asOf)
	if err != nil {
		return err
	}
	body := struct {
		AsOf   string           `json:"asOf"`
		Items  []balanceBody    `json:"items"`
		Totals []currencyTotals `json:"totals"`
	}{AsOf: timestamp(asOf), Items: make([]balanceBody, 0, len(rows)), Totals: []currencyTotals{}}
	type sum struct{ d, c decimal.Decimal }
	totals, order := map[string]*sum{}, []string{}
	for _, b := range rows {
		body.Items = append(body.Items, balanceBody{Account: b.Account, Currency: b.Currency, Debits: number(b.Debits),
			Credits: number(b.Credits), Balance: number(b.Debits.Sub(b.Credits))})
		t, ok := totals[b.Currency]
		if !ok {
			t = &sum{}
			totals[b.Currency], order = t, append(order, b.Currency)
		}
		t.d, t.c = t.d.Add(b.Debits), t.c.Add(b.Credits)
	}
	for _, cur := range order {
		t := totals[cur]
		body.Totals = append(body.Totals, currencyTotals{Currency: cur, Debits: number(t.d), Credits: number(t.c), Balanced: t.d.Equal(t.c)})
	}
	return writeJSON(w, http.StatusOK, body)
}
