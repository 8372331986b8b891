package benchkit

import (
	"crypto/rand"
	"encoding/base64"
)

// SuccessType is the webhook type whose arrival completes a payment.
const SuccessType = "payment.success"

// WebhookDelivery is the part of a webhook body (contract §8) a receiver reads.
type WebhookDelivery struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	CreatedAt string `json:"createdAt"`
	Data      struct {
		ID string `json:"id"`
	} `json:"data"`
}

// WebhookSecret returns a fresh Standard Webhooks secret (whsec_ and 24
// random bytes in base64) for the payments of one run.
func WebhookSecret() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b) // never fails (crypto/rand documents it)
	return "whsec_" + base64.StdEncoding.EncodeToString(b)
}
