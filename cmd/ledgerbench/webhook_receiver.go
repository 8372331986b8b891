package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/ledger/ledger/cmd/internal/benchkit"
	"github.com/ledger/ledger/workers/webhooks"
)

// webhookReceiver is the merchant's end of the lifecycle mode: a loopback
// HTTP server that answers every webhook 200 at once and records, per
// payment, when its payment.success webhook first arrived. It checks each
// delivery's signature (Standard Webhooks, the ledger's own verifier) and
// counts, rather than refuses, the bad ones: a refusal would make ledgerd
// retry and the run measure its retry schedule.
type webhookReceiver struct {
	URL    string // where ledgerd posts: http://127.0.0.1:<port>/webhooks
	secret string
	srv    *http.Server
	served chan error

	mu        sync.Mutex
	successAt map[string]time.Time // payment id → first payment.success arrival
	seen      map[string]string    // webhook-id → type, of every delivery
	stats     webhookStats
}

// webhookStats counts what the receiver got.
type webhookStats struct {
	Received int            `json:"received"`
	ByType   map[string]int `json:"byType"`
	// DuplicateSuccess are payment.success deliveries whose webhook-id had
	// arrived before: the same event delivered twice.
	DuplicateSuccess int `json:"duplicateSuccess"`
	// DuplicateAll counts the same over every type.
	DuplicateAll int `json:"duplicateAll"`
	// ExtraSuccess are payment.success deliveries with a new webhook-id for a
	// payment that had one already: a second success event.
	ExtraSuccess  int `json:"extraSuccess"`
	BadSignatures int `json:"badSignatures"`
	Malformed     int `json:"malformed"` // no webhook-id, or a body without type or data.id
}

// startWebhookReceiver listens on a free loopback port and serves until close.
func startWebhookReceiver(secret string) (*webhookReceiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("webhook receiver: %w", err)
	}
	r := &webhookReceiver{URL: "http://" + ln.Addr().String() + "/webhooks", secret: secret, served: make(chan error, 1),
		successAt: map[string]time.Time{}, seen: map[string]string{}, stats: webhookStats{ByType: map[string]int{}}}
	r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second}
	go func() { r.served <- r.srv.Serve(ln) }()
	return r, nil
}

// ServeHTTP records one delivery and answers 200.
func (r *webhookReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	at := time.Now()
	body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	w.WriteHeader(http.StatusOK)
	var d benchkit.WebhookDelivery
	if err == nil {
		err = json.Unmarshal(body, &d)
	}
	msgID := req.Header.Get(webhooks.HeaderID)
	badSig := webhooks.Verify(r.secret, req.Header, body, 5*time.Minute, at) != nil
	r.record(at, msgID, d, err != nil || msgID == "" || d.Type == "" || d.Data.ID == "", badSig)
}

// record counts one delivery that arrived at at.
func (r *webhookReceiver) record(at time.Time, msgID string, d benchkit.WebhookDelivery, malformed, badSig bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stats.Received++
	if badSig {
		r.stats.BadSignatures++
	}
	if malformed {
		r.stats.Malformed++
		return
	}
	r.stats.ByType[d.Type]++
	_, dup := r.seen[msgID]
	if dup {
		r.stats.DuplicateAll++
	} else {
		r.seen[msgID] = d.Type
	}
	if d.Type != benchkit.SuccessType {
		return
	}
	switch _, had := r.successAt[d.Data.ID]; {
	case dup:
		r.stats.DuplicateSuccess++
	case had:
		r.stats.ExtraSuccess++
	default:
		r.successAt[d.Data.ID] = at
	}
}

// arrivals returns a copy of payment id → first payment.success arrival.
func (r *webhookReceiver) arrivals() map[string]time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]time.Time, len(r.successAt))
	for id, at := range r.successAt {
		out[id] = at
	}
	return out
}

// succeeded returns how many of ids had their payment.success webhook.
func (r *webhookReceiver) succeeded(ids []string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, id := range ids {
		if _, ok := r.successAt[id]; ok {
			n++
		}
	}
	return n
}

// waitSucceeded polls until every one of ids had its payment.success
// webhook or limit passes, and says whether they all did.
func (r *webhookReceiver) waitSucceeded(ctx context.Context, ids []string, limit time.Duration) (bool, error) {
	deadline := time.Now().Add(limit)
	for {
		if r.succeeded(ids) == len(ids) {
			return true, nil
		}
		if !time.Now().Before(deadline) {
			return false, nil
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// snapshot returns the counts so far.
func (r *webhookReceiver) snapshot() webhookStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.stats
	s.ByType = make(map[string]int, len(r.stats.ByType))
	for t, n := range r.stats.ByType {
		s.ByType[t] = n
	}
	return s
}

// close stops the server, letting deliveries in flight finish.
func (r *webhookReceiver) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := r.srv.Shutdown(ctx)
	if serr := <-r.served; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}
