package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync/atomic"

	"github.com/ledger/ledger/cmd/internal/benchkit"
)

// paymentLoad is the payments phase's operation: worker w pays as partner
// w % len(partners), a random amount of 100 to 5,000 ZAR with a reference
// numbered across the run, and webhookURL and webhookSecret where set.
type paymentLoad struct {
	client        *http.Client
	baseURL       string
	partners      []benchkit.Partner
	webhookURL    string
	webhookSecret string
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
	return benchkit.Post(ctx, l.client, l.baseURL+"/payments", p.Token, body, http.StatusCreated)
}
