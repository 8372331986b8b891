package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
)

// The counters are read from ledgerd's exposition format and the phase's
// figures are the difference between two scrapes.
func TestWorkerCountsFromMetrics(t *testing.T) {
	scrape := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		scrape++
		n := float64(scrape * 10) // every counter grows by 10 between scrapes
		fmt.Fprintf(w, `# TYPE ledger_worker_fast_path_total counter
ledger_worker_fast_path_total{outcome="queued",step="payout"} %[1]g
ledger_worker_fast_path_total{outcome="dropped",step="payout"} %[1]g
ledger_worker_fast_path_total{outcome="queued",step="webhook"} %[1]g
ledger_worker_fast_path_total{outcome="no_slot",step="webhook"} %[1]g
# TYPE ledger_webhook_attempts_total counter
ledger_webhook_attempts_total{outcome="delivered"} %[1]g
# TYPE ledger_worker_dead_letters_total counter
ledger_worker_dead_letters_total{consumer="lifecycle_deposited"} %[1]g
ledger_worker_dead_letters_total{consumer="lifecycle_transferring"} %[1]g
# TYPE ledger_worker_message_seconds histogram
ledger_worker_message_seconds_bucket{consumer="lifecycle_deposited",outcome="ok",le="+Inf"} %[1]g
ledger_worker_message_seconds_sum{consumer="lifecycle_deposited",outcome="ok"} 1
ledger_worker_message_seconds_count{consumer="lifecycle_deposited",outcome="ok"} %[1]g
`, n)
	}))
	defer srv.Close()
	before, err := scrapeWorkerCounts(context.Background(), srv.Client(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	after, err := scrapeWorkerCounts(context.Background(), srv.Client(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	want := workerCounts{PayoutQueued: 10, PayoutDropped: 10, WebhookQueued: 10, WebhookNoSlot: 10, DeadLetters: 20,
		WebhookAttempts: map[string]float64{"delivered": 10}, Messages: map[string]float64{"lifecycle_deposited ok": 10}}
	if got := after.since(before); !reflect.DeepEqual(got, want) {
		t.Fatalf("counts over the phase:\n got %+v\nwant %+v", got, want)
	}
	if _, err := scrapeWorkerCounts(context.Background(), srv.Client(), srv.URL+"/nothing"); err == nil {
		t.Fatal("a failed scrape gave no error")
	}
}
