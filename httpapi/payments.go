package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/ledger/ledger/domain"
)

// Payments is the payment aggregate: commands go through the event store,
// reads come from the payments read model.
type Payments interface {
	// ExecutePayment reads the payment's state at its version, asks decide for events,
	// appends them (with the read models, in the request's transaction) and
	// returns the payment after them.
	ExecutePayment(ctx context.Context, ref domain.StreamRef, meta domain.Metadata,
		decide func(domain.Payment) ([]domain.Event, error)) (domain.PaymentSnapshot, error)
	// CreatePayment is ExecutePayment for a new payment's stream.
	CreatePayment(ctx context.Context, ref domain.StreamRef, meta domain.Metadata,
		decide func(domain.Payment) ([]domain.Event, error)) (domain.PaymentSnapshot, error)
	Payment(ctx context.Context, tenantID, id uuid.UUID) (domain.PaymentSnapshot, error)
	ListPayments(ctx context.Context, tenantID uuid.UUID, f domain.PaymentFilter, limit int, offset string) ([]domain.PaymentSnapshot, string, error)
	ListPaymentDocuments(ctx context.Context, tenantID, paymentID uuid.UUID, limit int, offset string) ([]domain.PaymentDocumentItem, string, error)
	ListWebhookAttempts(ctx context.Context, tenantID, paymentID uuid.UUID) ([]domain.WebhookAttemptItem, error)
}

// Rails are the outside systems a new payment needs: prices, a Lightning
// node for invoices, USDT deposit addresses, and our collection accounts.
type Rails interface {
	BTCPrices(ctx context.Context) (domain.BTCPrices, error)
	// LightningInvoice asks the node for an invoice of amountSats expiring
	// after expiry; the same payment id always gets the same payment hash.
	LightningInvoice(ctx context.Context, paymentID uuid.UUID, amountSats int64, description string,
		createdAt time.Time, expiry time.Duration) (domain.LightningInvoice, error)
	USDTDepositAddress(ctx context.Context, paymentID uuid.UUID) (string, error)
	CollectionAccount(currency string) (domain.CollectionAccount, bool)
}

func paymentStream(tenantID, id uuid.UUID) domain.StreamRef {
	return domain.StreamRef{TenantID: tenantID, Type: "payment", ID: id}
}

// createPaymentRequest is the body of POST /payments (spec §2.9). Numbers
// and meta stay raw so the domain checks them exactly.
type createPaymentRequest struct {
	MerchantID    *string         `json:"merchantId"`
	Amount        json.RawMessage `json:"amount"`
	Reference     *string         `json:"reference"`
	Tag           *string         `json:"tag"`
	Type          *string         `json:"type"`
	FromCountry   *string         `json:"fromCountry"`
	IsSlowPayment *bool           `json:"isSlowPayment"`
	BufferRate    json.RawMessage `json:"bufferRate"`
	WebhookURL    *string         `json:"webhookUrl"`
	WebhookSecret *string         `json:"webhookSecret"`
	Meta          json.RawMessage `json:"meta"`
}

var errPricesUnavailable = domain.Errorf(domain.Unavailable, "prices_unavailable",
	"no BTC price is available right now; retry shortly")

// createPayment is POST /payments (spec §4.6, contract §6): validate the
// request, route it to its merchant, price it, get its funding details from
// the rails, then append payment.created. A user token pays as its user, a
// tenant token as the tenant's owner.
func (s *Server) createPayment(w http.ResponseWriter, r *http.Request) error {
	c, err := anyCaller(r)
	if err != nil {
		return err
	}
	var req createPaymentRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	order, err := domain.ValidatePaymentRequest(domain.PaymentRequest{MerchantID: deref(req.MerchantID),
		Amount: req.Amount, Reference: deref(req.Reference), Tag: deref(req.Tag), Type: deref(req.Type),
		FromCountry: deref(req.FromCountry), IsSlowPayment: req.IsSlowPayment != nil && *req.IsSlowPayment,
		BufferRate: req.BufferRate, WebhookURL: deref(req.WebhookURL), WebhookSecret: deref(req.WebhookSecret),
		Meta: req.Meta}, s.cfg.InsecureWebhooks)
	if err != nil {
		return err
	}
	if order.WebhookURL != "" && s.checkHook != nil {
		if err := s.checkHook(order.WebhookURL); err != nil {
			return domain.Invalidf("webhookUrl", "must be an https URL of a public address: %v", err)
		}
	}
	ctx := r.Context()
	merchant, err := s.paymentMerchant(ctx, c.TenantID, order.MerchantID)
	if err != nil {
		return err
	}
	payerID := c.UserID
	if c.Kind != KindUser {
		if payerID, err = s.users.OwnerUserID(ctx, c.TenantID); err != nil {
			return err
		}
	}
	var payer domain.User
	if order.CollectionMethod == domain.CollectMomo {
		u, err := s.users.User(ctx, c.TenantID, payerID)
		if err != nil {
			return err
		}
		payer = u.User
	}
	now := s.now()
	plan, err := domain.PlanPayment(order, merchant, payer, s.cfg.Validity, now, s.cfg.Location)
	if err != nil {
		return err
	}
	// Checked as given (ValidatePaymentRequest), stored sealed: the event
	// and the read model keep a form only the webhook sender opens.
	if plan.Order.WebhookSecret, err = s.sealSecret(ctx, plan.Order.WebhookSecret); err != nil {
		return err
	}
	prices, err := s.rails.BTCPrices(ctx)
	if err != nil {
		s.logger(r).Error("btc prices", "err", err)
		return errPricesUnavailable
	}
	quote, err := domain.QuotePayment(domain.QuoteInput{FromCurrency: order.FromCurrency,
		DestinationCurrency: merchant.Currency, Amount: order.Amount, BufferRate: order.BufferRateOrZero(),
		OTCFeeRate: s.cfg.OTCFeeRate, Prices: prices})
	if errors.Is(err, domain.ErrPriceUnavailable) {
		s.logger(r).Error("quote payment", "err", err)
		return errPricesUnavailable
	}
	if err != nil {
		return err // a caller error, or an internal one
	}
	id := uuid.Must(uuid.NewV7())
	funding, err := s.fundPayment(ctx, id, plan, quote, payer, now)
	if err != nil {
		return err
	}
	p, err := s.payments.CreatePayment(ctx, paymentStream(c.TenantID, id), metadata(r),
		func(p domain.Payment) ([]domain.Event, error) {
			return domain.DecideCreatePayment(p, domain.CreatePayment{PaymentID: id, UserID: payerID, Plan: plan,
				Quote: quote, Funding: funding, Now: now})
		})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, paymentResponse(p, false))
}

// paymentMerchant reads the merchant a payment names: one that is not the
// tenant's (or not a UUID) is 400 naming merchantId (contract §6).
func (s *Server) paymentMerchant(ctx context.Context, tenantID uuid.UUID, id string) (domain.Merchant, error) {
	notFound := domain.Invalidf("merchantId", "names no merchant of this tenant")
	mid, err := uuid.Parse(id)
	if err != nil {
		return domain.Merchant{}, notFound
	}
	m, err := s.merchants.Merchant(ctx, tenantID, mid)
	if domain.ErrorKind(err) == domain.NotFound {
		return domain.Merchant{}, notFound
	}
	return m.Merchant, err
}

// fundPayment asks the rails for the funding details of the plan's rail.
func (s *Server) fundPayment(ctx context.Context, id uuid.UUID, plan domain.PaymentPlan, q domain.Quote,
	payer domain.User, now time.Time) (domain.PaymentFunding, error) {
	var f domain.PaymentFunding
	unavailable := func(rail string, err error) error {
		return &domain.Error{Kind: domain.Unavailable, Code: "rail_unavailable",
			Message: rail + " is not available right now; retry shortly", Err: err}
	}
	switch plan.Funding {
	case domain.FundingLightning:
		desc := fmt.Sprintf("Payment %s to %s", id, plan.Merchant.Name)
		inv, err := s.rails.LightningInvoice(ctx, id, q.AmountSats, desc, now, plan.Validity)
		if err != nil {
			return f, unavailable("the Lightning node", err)
		}
		f.Invoice = &inv
	case domain.FundingUSDT:
		addr, err := s.rails.USDTDepositAddress(ctx, id)
		if err != nil {
			return f, unavailable("USDT deposits", err)
		}
		f.USDTAddress = addr
	case domain.FundingBankTransfer:
		acct, ok := s.rails.CollectionAccount(plan.Order.FromCurrency)
		if !ok {
			return f, unavailable("collection in "+plan.Order.FromCurrency, nil)
		}
		f.Collection = acct
	case domain.FundingMomo:
		for _, a := range payer.MomoAccounts {
			if payer.DefaultMomoAccountID != nil && a.ID == *payer.DefaultMomoAccountID {
				f.PayerMomoPhone = a.PhoneNumber
			}
		}
	}
	return f, nil
}

// listPayments is GET /payments?limit=&offset=&status=&merchantId=: a user
// token lists its own payments, a tenant token all of the tenant's.
func (s *Server) listPayments(w http.ResponseWriter, r *http.Request) error {
	c, err := anyCaller(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	limit, err := pageLimit(q.Get("limit"))
	if err != nil {
		return err
	}
	f := domain.PaymentFilter{Status: q.Get("status")}
	if c.Kind == KindUser {
		f.UserID = c.UserID
	}
	if f.Status != "" && !isOneOf(f.Status, domain.PaymentStatuses) {
		return domain.Invalidf("status", "must be one of created, deposited, transferring, success, expired, failed")
	}
	if m := q.Get("merchantId"); m != "" {
		if f.MerchantID, err = uuid.Parse(m); err != nil {
			return domain.Invalidf("merchantId", "must be a merchant id (a UUID)")
		}
	}
	items, next, err := s.payments.ListPayments(r.Context(), c.TenantID, f, limit, q.Get("offset"))
	if err != nil {
		return err
	}
	body := page[paymentBody]{Items: make([]paymentBody, 0, len(items)), OffsetMarker: nullable(next)}
	for _, p := range items {
		body.Items = append(body.Items, paymentResponse(p, false))
	}
	return writeJSON(w, http.StatusOK, body)
}

// pathPayment reads the payment of the path's paymentId that the caller may
// see: the tenant's, and for a user token the user's own. Anything else,
// an id that is not a UUID included, is 404.
func (s *Server) pathPayment(r *http.Request) (Caller, domain.PaymentSnapshot, error) {
	c, err := anyCaller(r)
	if err != nil {
		return c, domain.PaymentSnapshot{}, err
	}
	id, err := uuid.Parse(mux.Vars(r)["paymentId"])
	if err != nil {
		return c, domain.PaymentSnapshot{}, domain.ErrNotFound
	}
	p, err := s.payments.Payment(r.Context(), c.TenantID, id)
	if err != nil {
		return c, p, err
	}
	if c.Kind == KindUser && p.UserID != c.UserID {
		return c, domain.PaymentSnapshot{}, domain.ErrNotFound
	}
	return c, p, nil
}

// getPayment is GET /payments/{paymentId}[?includeStatusLog=true][&asOf=timestamp].
func (s *Server) getPayment(w http.ResponseWriter, r *http.Request) error {
	withLog := false
	switch v := r.URL.Query().Get("includeStatusLog"); v {
	case "", "false":
	case "true":
		withLog = true
	default:
		return domain.Invalidf("includeStatusLog", "must be true or false")
	}
	c, p, err := s.pathPayment(r)
	if err != nil {
		return err
	}
	if v := r.URL.Query().Get("asOf"); v != "" {
		asOf, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return domain.Invalidf("asOf", "must be an ISO 8601 timestamp such as 2026-11-22T10:15:30.123Z")
		}
		// The payment as it stood then, folded from its events.
		if p, err = s.events.PaymentAsOf(r.Context(), paymentStream(c.TenantID, p.ID), asOf); err != nil {
			return err
		}
	}
	return writeJSON(w, http.StatusOK, paymentResponse(p, withLog))
}
