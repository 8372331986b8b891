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

// SandboxPayout is one payout the sandbox rail executed (contract §7).
type SandboxPayout struct {
	ID             uuid.UUID
	PaymentID      uuid.UUID
	IdempotencyKey string
	Rail           string
	Amount         decimal.Decimal
	Currency       string
	Status         string
	CreatedAt      time.Time
}

// SandboxPayouts is the sandbox payout rail's own books.
type SandboxPayouts interface {
	SandboxPayouts(ctx context.Context, paymentID uuid.UUID) ([]SandboxPayout, int64, error)
}

type depositRequest struct {
	Amount json.RawMessage `json:"amount"`
}

// sandboxDeposit is POST /sandbox/payments/{paymentId}/deposit (contract
// §7): the payment's funding arrives, by whatever rail it is funded. amount
// counts as the funding details do (sats of the invoice, cents of a bank
// transfer or of USDT, whole units of a momo push); omitted, it is exactly
// what remains due. 202 with the payment; the lifecycle workers take it on.
func (s *Server) sandboxDeposit(w http.ResponseWriter, r *http.Request) error {
	c, p, err := s.pathPayment(r)
	if err != nil {
		return err
	}
	var req depositRequest
	if r.ContentLength != 0 {
		if err := decode(w, r, &req); err != nil {
			return err
		}
	}
	var amount decimal.Decimal
	if len(req.Amount) > 0 && string(req.Amount) != "null" {
		var n int64
		if err := json.Unmarshal(req.Amount, &n); err != nil || n <= 0 {
			return domain.Invalidf("amount", "must be a whole number greater than 0, counted as the funding details count")
		}
		amount = p.DepositUnits(n)
	}
	after, err := s.payments.RecordSandboxDeposit(r.Context(), paymentStream(c.TenantID, p.ID), p, amount, metadata(r))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusAccepted, paymentResponse(after, false))
}

type sandboxPayoutBody struct {
	ID             string          `json:"id"`
	PaymentID      string          `json:"paymentId"`
	IdempotencyKey string          `json:"idempotencyKey"`
	Rail           string          `json:"rail"`
	Amount         json.RawMessage `json:"amount"`
	Currency       string          `json:"currency"`
	Status         string          `json:"status"`
	CreatedAt      string          `json:"createdAt"`
}

// sandboxPayouts is GET /sandbox/payouts?paymentId=: the payouts the
// sandbox rail executed for a payment and the calls it received (more than
// one item is a double payout).
func (s *Server) sandboxPayouts(w http.ResponseWriter, r *http.Request) error {
	c, err := anyCaller(r)
	if err != nil {
		return err
	}
	id, err := uuid.Parse(r.URL.Query().Get("paymentId"))
	if err != nil {
		return domain.Invalidf("paymentId", "must be a payment id (a UUID)")
	}
	p, err := s.payments.Payment(r.Context(), c.TenantID, id)
	if err != nil {
		return err
	}
	if c.Kind == KindUser && p.UserID != c.UserID {
		return domain.ErrNotFound
	}
	items, calls, err := s.sandbox.SandboxPayouts(r.Context(), id)
	if err != nil {
		return err
	}
	body := struct {
		Items []sandboxPayoutBody `json:"items"`
		Calls int64               `json:"calls"`
	}{Items: make([]sandboxPayoutBody, 0, len(items)), Calls: calls}
	for _, it := range items {
		body.Items = append(body.Items, sandboxPayoutBody{ID: it.ID.String(), PaymentID: it.PaymentID.String(),
			IdempotencyKey: it.IdempotencyKey, Rail: it.Rail, Amount: number(it.Amount), Currency: it.Currency,
			Status: it.Status, CreatedAt: timestamp(it.CreatedAt)})
	}
	return writeJSON(w, http.StatusOK, body)
}
