package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/ledger/ledger/cmd/internal/benchkit"
	"github.com/ledger/ledger/workers/webhooks"
)

// Receiver behaviours, chosen by the webhook URL's path.
const (
	receiverOK      = "/ok"      // 200 at once
	receiverHostile = "/hostile" // fails each delivery in several ways before a 200
	receiverSlow    = "/slow"    // 200 after slowReceiverDelay
)

// slowReceiverDelay is how long the slow receiver takes: under ledgerd's
// 10 s timeout, so its deliveries succeed, and long enough that a
// dispatcher waiting on it would visibly delay everyone else.
const slowReceiverDelay = 6 * time.Second

// chaosReceiver is the merchants' end of a fault scenario. It records,
// per webhook-id, every arrival and what it answered, so the check can
// tell a delivery that never got a 2xx from one sent again after its 2xx.
//
// The hostile path answers a webhook-id's attempts in turn: a hang past
// ledgerd's timeout (payment.created only, to keep the run short), a 500,
// a connection closed without an answer, then 200.
type chaosReceiver struct {
	base   string // http://127.0.0.1:port
	secret string
	srv    *http.Server
	served chan error

	mu   sync.Mutex
	byID map[string]*webhookHistory
	bad  int // bad signature or malformed body
}

// webhookHistory is what arrived under one webhook-id.
type webhookHistory struct {
	Type      string
	PaymentID string
	Path      string
	Attempts  int
	First2xx  time.Time   // zero: never answered 2xx
	After2xx  []time.Time // arrivals after a 2xx had been answered
}

// startChaosReceiver starts the receiver on loopback: over TLS with cert
// when it is not nil (production ledgerd posts webhooks to https URLs
// only), else plain HTTP.
func startChaosReceiver(secret string, cert *tls.Certificate) (*chaosReceiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("webhook receiver: %w", err)
	}
	scheme := "http://"
	var errorLog *log.Logger
	if cert != nil {
		ln, scheme = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{*cert}}), "https://"
		// A ledgerd killed mid-handshake is a scenario's fault, not news.
		errorLog = log.New(io.Discard, "", 0)
	}
	r := &chaosReceiver{base: scheme + ln.Addr().String(), secret: secret, served: make(chan error, 1),
		byID: map[string]*webhookHistory{}}
	r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second, ErrorLog: errorLog}
	go func() { r.served <- r.srv.Serve(ln) }()
	return r, nil
}

// URL is the webhook URL of one receiver behaviour.
func (r *chaosReceiver) URL(path string) string { return r.base + path }

func (r *chaosReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	var d benchkit.WebhookDelivery
	if err == nil {
		err = json.Unmarshal(body, &d)
	}
	id := req.Header.Get(webhooks.HeaderID)
	if err != nil || id == "" || d.Type == "" || webhooks.Verify(r.secret, req.Header, body, 5*time.Minute, time.Now()) != nil {
		r.mu.Lock()
		r.bad++
		r.mu.Unlock()
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	attempt := r.arrived(id, d, req.URL.Path)
	switch req.URL.Path {
	case receiverHostile:
		if d.Type == "payment.created" {
			attempt-- // its first attempt hangs; the others fail as any type's do
			if attempt == 0 {
				<-req.Context().Done() // ledgerd gives up after its timeout
				return
			}
		}
		switch attempt {
		case 1:
			w.WriteHeader(http.StatusInternalServerError)
			return
		case 2:
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				conn.Close()
			}
			return
		}
	case receiverSlow:
		select {
		case <-time.After(slowReceiverDelay):
		case <-req.Context().Done():
			return
		}
	}
	w.WriteHeader(http.StatusOK)
	r.answered2xx(id)
}

// arrived records an arrival and returns its attempt number for this id.
func (r *chaosReceiver) arrived(id string, d benchkit.WebhookDelivery, path string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	h := r.byID[id]
	if h == nil {
		h = &webhookHistory{Type: d.Type, PaymentID: d.Data.ID, Path: path}
		r.byID[id] = h
	}
	h.Attempts++
	if !h.First2xx.IsZero() {
		h.After2xx = append(h.After2xx, time.Now())
	}
	return h.Attempts
}

func (r *chaosReceiver) answered2xx(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if h := r.byID[id]; h.First2xx.IsZero() {
		h.First2xx = time.Now()
	}
}

// histories returns a copy of what arrived, by webhook-id.
func (r *chaosReceiver) histories() (map[string]webhookHistory, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]webhookHistory, len(r.byID))
	for id, h := range r.byID {
		c := *h
		c.After2xx = append([]time.Time(nil), h.After2xx...)
		out[id] = c
	}
	return out, r.bad
}

// successLatencies returns, for the payments whose webhooks went to path,
// the time from deposit to the first 2xx of their payment.success.
func (r *chaosReceiver) successLatencies(payments []ackedPayment, path string) []time.Duration {
	hs, _ := r.histories()
	success := map[string]time.Time{}
	for _, h := range hs {
		if h.Type == benchkit.SuccessType && !h.First2xx.IsZero() {
			success[h.PaymentID] = h.First2xx
		}
	}
	var out []time.Duration
	for _, p := range payments {
		if at, ok := success[p.ID]; ok && p.Deposited && p.WebhookURL == r.URL(path) {
			out = append(out, at.Sub(p.DepositedAt))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func (r *chaosReceiver) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := r.srv.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = r.srv.Close() // hung hostile requests
	}
	if serr := <-r.served; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}
