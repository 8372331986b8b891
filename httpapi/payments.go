package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/mux"
	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/domain"
)

// Payments are the payment use cases (workers/usecase), which return the
// payment after their events, and the payments read model.
type Payments interface {
	CreatePayment(ctx context.Context, tenantID, payerID uuid.UUID, req domain.PaymentRequest, meta domain.Metadata) (domain.PaymentSnapshot, error)
	AttachPaymentDocument(ctx context.Context, ref domain.StreamRef, doc domain.AttachPaymentDocument, meta domain.Metadata) (domain.PaymentSnapshot, error)
	// RecordSandboxDeposit decides first on read, the payment as the
	// handler read it, so the deposit reads it once.
	RecordSandboxDeposit(ctx context.Context, ref domain.StreamRef, read domain.PaymentSnapshot, amount decimal.Decimal,
		meta domain.Metadata) (domain.PaymentSnapshot, error)
	Payment(ctx context.Context, tenantID, id uuid.UUID) (domain.PaymentSnapshot, error)
	ListPayments(ctx context.Context, tenantID uuid.UUID, f domain.PaymentFilter, limit int, offset string) ([]domain.PaymentSnapshot, string, error)
	ListPaymentDocuments(ctx context.Context, tenantID, paymentID uuid.UUID, limit int, offset string) ([]domain.PaymentDocumentItem, string, error)
	ListWebhookAttempts(ctx context.Context, tenantID, paymentID uuid.UUID) ([]domain.WebhookAttemptItem, error)
	PaymentAsOf(ctx context.Context, ref domain.StreamRef, asOf time.Time) (domain.PaymentSnapshot, error)
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

// createPayment is POST /payments (spec §4.6, contract §6). A user token
// pays as its user, a tenant token as the tenant's owner.
func (s *Server) createPayment(w http.ResponseWriter, r *http.Request) error {
	c, err := anyCaller(r)
	if err != nil {
		return err
	}
	var req createPaymentRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	p, err := s.payments.CreatePayment(r.Context(), c.TenantID, c.UserID, domain.PaymentRequest{MerchantID: deref(req.MerchantID),
		Amount: req.Amount, Reference: deref(req.Reference), Tag: deref(req.Tag), Type: deref(req.Type),
		FromCountry: deref(req.FromCountry), IsSlowPayment: req.IsSlowPayment != nil && *req.IsSlowPayment,
		BufferRate: req.BufferRate, WebhookURL: deref(req.WebhookURL), WebhookSecret: deref(req.WebhookSecret),
		Meta: req.Meta}, metadata(r))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, paymentResponse(p, false))
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
		if p, err = s.payments.PaymentAsOf(r.Context(), paymentStream(c.TenantID, p.ID), asOf); err != nil {
			return err
		}
	}
	return writeJSON(w, http.StatusOK, paymentResponse(p, withLog))
}
