package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/ledger/ledger/domain"
)

type webhookAttemptBody struct {
	EventID    string  `json:"eventId"`
	Type       string  `json:"type"`
	Attempt    int     `json:"attempt"`
	At         string  `json:"at"`
	StatusCode *int    `json:"statusCode"`
	DurationMs int64   `json:"durationMs"`
	Error      *string `json:"error"`
}

// listWebhookAttempts is GET /payments/{paymentId}/webhooks (contract §8):
// every delivery attempt of the payment's status webhooks, oldest first.
func (s *Server) listWebhookAttempts(w http.ResponseWriter, r *http.Request) error {
	c, p, err := s.pathPayment(r)
	if err != nil {
		return err
	}
	items, err := s.payments.ListWebhookAttempts(r.Context(), c.TenantID, p.ID)
	if err != nil {
		return err
	}
	body := struct {
		Items []webhookAttemptBody `json:"items"`
	}{Items: make([]webhookAttemptBody, 0, len(items))}
	for _, a := range items {
		body.Items = append(body.Items, webhookAttemptBody{EventID: a.EventID.String(), Type: a.Type, Attempt: a.Attempt,
			At: timestamp(a.At), StatusCode: a.StatusCode, DurationMs: a.DurationMs, Error: a.Error})
	}
	return writeJSON(w, http.StatusOK, body)
}

// PaymentJSON writes a payment as the API returns it: the data of its
// status webhooks.
func PaymentJSON(p domain.PaymentSnapshot) ([]byte, error) {
	return json.Marshal(paymentResponse(p, false))
}
