package httpapi

import (
	"context"
	"net/http"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/ledger/ledger/domain"
)

// Merchants are the merchant use cases (workers/usecase) and the merchants
// read model. Any token of the tenant may create and read the tenant's
// merchants (contract §5).
type Merchants interface {
	// CreateMerchant appends a new merchant (with the read models, in the
	// request's transaction) and returns it.
	CreateMerchant(ctx context.Context, tenantID uuid.UUID, cmd domain.CreateMerchant, meta domain.Metadata) (domain.MerchantSnapshot, error)
	Merchant(ctx context.Context, tenantID, id uuid.UUID) (domain.MerchantSnapshot, error)
	ListMerchants(ctx context.Context, tenantID uuid.UUID, limit int, offset string) ([]domain.MerchantSnapshot, string, error)
}

// createMerchantRequest is the body of POST /merchants (spec §2.8). A null
// member is a member not sent.
type createMerchantRequest struct {
	Name          *string `json:"name"`
	Country       *string `json:"country"`
	BankName      *string `json:"bankName"`
	AccountNumber *string `json:"accountNumber"`
	PhoneNumber   *string `json:"phoneNumber"`
	LNURL         *string `json:"lnurl"`
}

// merchantBody is the Merchant of contract §5: members a payout method does
// not use are null.
type merchantBody struct {
	ID            string  `json:"id"`
	Name          string  `json:"name"`
	Country       string  `json:"country"`
	Currency      string  `json:"currency"`
	PayoutMethod  string  `json:"payoutMethod"`
	BankName      *string `json:"bankName"`
	AccountNumber *string `json:"accountNumber"`
	PhoneNumber   *string `json:"phoneNumber"`
	LNURL         *string `json:"lnurl"`
	CreatedAt     string  `json:"createdAt"`
	UpdatedAt     string  `json:"updatedAt"`
}

func merchantResponse(m domain.MerchantSnapshot) merchantBody {
	return merchantBody{ID: m.ID.String(), Name: m.Name, Country: m.Country, Currency: m.Currency,
		PayoutMethod: m.PayoutMethod, BankName: nullable(m.BankName), AccountNumber: nullable(m.AccountNumber),
		PhoneNumber: nullable(m.PhoneNumber), LNURL: nullable(m.LNURL),
		CreatedAt: timestamp(m.CreatedAt), UpdatedAt: timestamp(m.UpdatedAt)}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// createMerchant is POST /merchants: 201 with the new merchant.
func (s *Server) createMerchant(w http.ResponseWriter, r *http.Request) error {
	c, err := anyCaller(r)
	if err != nil {
		return err
	}
	var req createMerchantRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	m, err := s.merchants.CreateMerchant(r.Context(), c.TenantID, domain.CreateMerchant{Name: deref(req.Name),
		Country: deref(req.Country), BankName: deref(req.BankName), AccountNumber: deref(req.AccountNumber),
		PhoneNumber: deref(req.PhoneNumber), LNURL: deref(req.LNURL)}, metadata(r))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, merchantResponse(m))
}

// listMerchants is GET /merchants?limit=&offset=.
func (s *Server) listMerchants(w http.ResponseWriter, r *http.Request) error {
	c, err := anyCaller(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	limit, err := pageLimit(q.Get("limit"))
	if err != nil {
		return err
	}
	items, next, err := s.merchants.ListMerchants(r.Context(), c.TenantID, limit, q.Get("offset"))
	if err != nil {
		return err
	}
	body := page[merchantBody]{Items: make([]merchantBody, 0, len(items)), OffsetMarker: nullable(next)}
	for _, m := range items {
		body.Items = append(body.Items, merchantResponse(m))
	}
	return writeJSON(w, http.StatusOK, body)
}

// getMerchant is GET /merchants/{merchantId}: another tenant's merchant and
// an id that is not a UUID are 404, like an absent one.
func (s *Server) getMerchant(w http.ResponseWriter, r *http.Request) error {
	c, err := anyCaller(r)
	if err != nil {
		return err
	}
	id, err := uuid.Parse(mux.Vars(r)["merchantId"])
	if err != nil {
		return domain.ErrNotFound
	}
	m, err := s.merchants.Merchant(r.Context(), c.TenantID, id)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, merchantResponse(m))
}

type bankBody struct {
	Name string `json:"name"`
	Code string `json:"code"`
}

// listBanks is GET /utils/banks?country=: the banks a merchant of that
// country may name (contract §5).
func (s *Server) listBanks(w http.ResponseWriter, r *http.Request) error {
	if _, err := anyCaller(r); err != nil {
		return err
	}
	country := r.URL.Query().Get("country")
	banks, ok := domain.Banks(country)
	if !ok {
		if country == "" {
			return domain.Invalidf("country", "is required")
		}
		return domain.Invalidf("country", "must be SouthAfrica, Kenya or Nigeria (BTC merchants have no bank)")
	}
	if s.banks != nil {
		var err error
		if banks, err = s.banks(r.Context(), country); err != nil {
			return &domain.Error{Kind: domain.Unavailable, Code: "rail_unavailable",
				Message: "the bank list of the payout rail is not available right now; retry shortly", Err: err}
		}
	}
	body := struct {
		Items []bankBody `json:"items"`
	}{Items: make([]bankBody, 0, len(banks))}
	for _, b := range banks {
		body.Items = append(body.Items, bankBody{Name: b.Name, Code: b.Code})
	}
	return writeJSON(w, http.StatusOK, body)
}
