package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync/atomic"

	"github.com/google/uuid"

	"github.com/ledger/ledger/cmd/internal/benchkit"
)

// paymentLoad is the payments phase's operation: worker w pays as partner
// w % len(partners), a random amount of 100 to 5,000 ZAR with a reference
// numbered across the run, and webhookURL and webhookSecret where set.
// With keyed, every POST carries a fresh Idempotency-Key, as a careful
// partner's does.
type paymentLoad struct {
	client        *http.Client
	baseURL       string
	partners      []benchkit.Partner
	webhookURL    string
	webhookSecret string
	keyed         bool
	n             atomic.Int64
}

// op creates one payment.
func (l *paymentLoad) op(ctx context.Context, w int) error {
	_, err := l.create(ctx, l.partners[w%len(l.partners)])
	return err
}

// create POSTs one payment for p and returns the 201 answer's body.
func (l *paymentLoad) create(ctx context.Context, p benchkit.Partner) ([]byte, error) {
	body, err := json.Marshal(benchkit.PaymentRequest{MerchantID: p.MerchantID, Amount: 100 + rand.IntN(4901),
		Reference: fmt.Sprintf("Bench %d", l.n.Add(1)), WebhookURL: l.webhookURL, WebhookSecret: l.webhookSecret})
	if err != nil {
		return nil, err
	}
	return l.post(ctx, "/payments", p.Token, body, http.StatusCreated)
}

// post POSTs body to path of ledgerd as token, with a fresh
// Idempotency-Key when the load is keyed.
func (l *paymentLoad) post(ctx context.Context, path, token string, body []byte, want int) ([]byte, error) {
	return benchkit.PostKeyed(ctx, l.client, l.baseURL+path, token, l.key(), body, want)
}

// key is a fresh Idempotency-Key, or "" when the load is plain.
func (l *paymentLoad) key() string {
	if !l.keyed {
		return ""
	}
	return uuid.NewString()
}
