package dashboard

import (
	"net/http"

	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/domain"
)

type balancesView struct {
	Rows   []balanceRow
	Totals []currencyTotal
}

type balanceRow struct {
	domain.AccountBalance
	Balance decimal.Decimal // debits - credits
}

type currencyTotal struct {
	Currency        string
	Debits, Credits decimal.Decimal
	Balanced        bool
}

// balancesPage is GET /dashboard/balances: the trial balance now, as GET
// /ledger/balances computes it, with each currency's totals.
func (d *Dashboard) balancesPage(w http.ResponseWriter, r *http.Request) error {
	v := viewerFrom(r.Context())
	rows, err := d.Ledger.TrialBalance(r.Context(), v.TenantID, d.now().UTC())
	if err != nil {
		return err
	}
	var view balancesView
	index := map[string]int{}
	for _, b := range rows {
		view.Rows = append(view.Rows, balanceRow{AccountBalance: b, Balance: b.Debits.Sub(b.Credits)})
		i, ok := index[b.Currency]
		if !ok {
			i, index[b.Currency] = len(view.Totals), len(view.Totals)
			view.Totals = append(view.Totals, currencyTotal{Currency: b.Currency})
		}
		t := &view.Totals[i]
		t.Debits, t.Credits = t.Debits.Add(b.Debits), t.Credits.Add(b.Credits)
	}
	for i := range view.Totals {
		view.Totals[i].Balanced = view.Totals[i].Debits.Equal(view.Totals[i].Credits)
	}
	d.render(w, r, http.StatusOK, "balances", "Trial balance", view)
	return nil
}
