package dashboard

import (
	"net/http"

	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/domain"
)

type unmatchedView struct {
	Items []domain.UnmatchedFunds
	Open  []currencyAmount // what the open items hold, per currency: the suspense account's balance
}

type currencyAmount struct {
	Currency string
	Amount   decimal.Decimal
}

// unmatchedPage is GET /dashboard/unmatched: the money the tenant's
// payments were sent that they could not take (a wrong currency, after
// expiry, an excess), newest first, and what the open ones hold. The
// operator resolves them (ledgerctl unmatched); the page shows how.
func (d *Dashboard) unmatchedPage(w http.ResponseWriter, r *http.Request) error {
	v := viewerFrom(r.Context())
	items, err := d.Ledger.ListTenantUnmatched(r.Context(), v.TenantID, unmatchedPageSize)
	if err != nil {
		return err
	}
	view := unmatchedView{Items: items}
	index := map[string]int{}
	for _, u := range items {
		if u.Status != domain.UnmatchedOpen {
			continue
		}
		i, ok := index[u.Currency]
		if !ok {
			i, index[u.Currency] = len(view.Open), len(view.Open)
			view.Open = append(view.Open, currencyAmount{Currency: u.Currency})
		}
		view.Open[i].Amount = view.Open[i].Amount.Add(u.Amount)
	}
	d.render(w, r, http.StatusOK, "unmatched", "Unmatched funds", view)
	return nil
}

// unmatchedPageSize bounds the page: a queue longer than this is worked
// with ledgerctl, which lists it whole.
const unmatchedPageSize = 200
