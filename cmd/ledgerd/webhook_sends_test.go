package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestWebhookSendsAreBounded: with LEDGER_WEBHOOK_SENDS=2 and a receiver
// that hangs, the process never has more than two attempts at it in
// flight, however many payments' webhooks are due; the others stay pending
// and are all delivered once the receiver answers again.
func TestWebhookSendsAreBounded(t *testing.T) {
	t.Parallel()
	const bound, payments = 2, 6
	p := newPaymentSetup(t, map[string]string{"LEDGER_WEBHOOK_SENDS": fmt.Sprint(bound)})
	var (
		mu                   sync.Mutex
		inFlight, most, done int
	)
	answer := make(chan struct{})
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		mu.Unlock()
		<-answer
		mu.Lock()
		inFlight--
		done++
		mu.Unlock()
	}))
	t.Cleanup(rc.Close)
	var once sync.Once
	release := func() { once.Do(func() { close(answer) }) }
	t.Cleanup(release) // before rc.Close, which waits for the handlers
	for i := range payments {
		p.pay(t, p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":500,"reference":"r%d","webhookUrl":%q,"webhookSecret":"whsec_c2VjcmV0"}`,
			p.za, i, rc.URL))
	}
	seen := func() (int, int, int) {
		mu.Lock()
		defer mu.Unlock()
		return most, inFlight, done
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, n, _ := seen(); n == bound || time.Now().After(deadline) {
			break
		}
	}
	time.Sleep(time.Second) // the dispatcher polls every 20 ms: time to claim more if it would
	if most, n, _ := seen(); most != bound || n != bound {
		t.Fatalf("receiver hanging: %d attempts in flight, at most %d; want %d", n, most, bound)
	}
	// Two slots, six status changes offered to the fast path: the later
	// ones found no slot, and the metric says so.
	if noSlot := metricValue(t, p.s.get(t, "/metrics").Body, `ledger_worker_fast_path_total{outcome="no_slot",step="webhook"}`); noSlot < 1 {
		t.Errorf("fast path webhooks that found no send slot: got %v, want at least 1", noSlot)
	}
	release()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, _, d := seen(); d >= payments || time.Now().After(deadline) {
			break
		}
	}
	if most, _, d := seen(); most > bound || d != payments {
		t.Fatalf("after the receiver answered: %d attempts answered, at most %d at once; want %d, at most %d", d, most, payments, bound)
	}
}

// metricValue is the value of the sample named series (name and labels as
// the text exposition writes them) in a /metrics body; 0 when absent.
func metricValue(t *testing.T, body []byte, series string) float64 {
	t.Helper()
	for line := range strings.Lines(string(body)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("metric %s: %v", series, err)
			}
			return f
		}
	}
	return 0
}
