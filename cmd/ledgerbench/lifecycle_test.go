package main

import (
	"testing"
	"time"

	"github.com/ledger/ledger/cmd/internal/benchkit"
)

func TestSummariseLifecycle(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	recs := []lifecyclePayment{
		{ID: "a", DepositAt: at(10)},
		{},                           // POST /payments failed
		{ID: "b"},                    // created, deposit failed
		{ID: "c", DepositAt: at(0)},  // lost
		{ID: "d", DepositAt: at(20)}, // webhook before the deposit's answer
		{ID: "e", DepositAt: at(30)},
	}
	arrivals := map[string]time.Time{"a": at(110), "d": at(19), "e": at(80), "x": at(500)}
	s := summariseLifecycle(recs, arrivals)
	if s.Created != 5 || s.Deposited != 4 || s.Completed != 3 {
		t.Errorf("created/deposited/completed = %d/%d/%d, want 5/4/3", s.Created, s.Deposited, s.Completed)
	}
	if len(s.Lost) != 1 || s.Lost[0] != 3 {
		t.Errorf("lost = %v, want [3]", s.Lost)
	}
	if s.Early != 1 {
		t.Errorf("early = %d, want 1", s.Early)
	}
	if !s.FirstDeposit.Equal(at(0)) || !s.LastSuccess.Equal(at(110)) {
		t.Errorf("first deposit %v, last success %v", s.FirstDeposit, s.LastSuccess)
	}
	want := []time.Duration{100 * time.Millisecond, 0, 50 * time.Millisecond}
	if len(s.Latencies) != len(want) {
		t.Fatalf("latencies = %v, want %v", s.Latencies, want)
	}
	for i := range want {
		if s.Latencies[i] != want[i] {
			t.Errorf("latencies = %v, want %v", s.Latencies, want)
		}
	}
}

func TestWebhookReceiverRecord(t *testing.T) {
	r := &webhookReceiver{successAt: map[string]time.Time{}, seen: map[string]string{}, stats: webhookStats{ByType: map[string]int{}}}
	d := func(typ, payment string) benchkit.WebhookDelivery {
		var w benchkit.WebhookDelivery
		w.Type, w.Data.ID = typ, payment
		return w
	}
	t0 := time.Now()
	r.record(t0, "m1", d("payment.created", "p1"), false, false)
	r.record(t0.Add(1), "m2", d(benchkit.SuccessType, "p1"), false, false)
	r.record(t0.Add(2), "m2", d(benchkit.SuccessType, "p1"), false, false) // redelivered
	r.record(t0.Add(3), "m3", d(benchkit.SuccessType, "p1"), false, true)  // a second success event, bad signature
	r.record(t0.Add(4), "", benchkit.WebhookDelivery{}, true, true)
	s := r.snapshot()
	if s.Received != 5 || s.DuplicateSuccess != 1 || s.DuplicateAll != 1 || s.ExtraSuccess != 1 ||
		s.BadSignatures != 2 || s.Malformed != 1 || s.ByType[benchkit.SuccessType] != 3 || s.ByType["payment.created"] != 1 {
		t.Errorf("stats = %+v", s)
	}
	if got := r.arrivals()["p1"]; !got.Equal(t0.Add(1)) {
		t.Errorf("p1 arrival = %v, want the first success delivery's", got)
	}
	if n := r.succeeded([]string{"p1", "p2"}); n != 1 {
		t.Errorf("succeeded = %d, want 1", n)
	}
}

func TestParseProcStat(t *testing.T) {
	// A command with a space and a parenthesis, as the kernel writes it.
	line := "4242 (led (gerd) S 1 4242 4242 0 -1 4194560 1200 0 0 0 731 112 0 0 20 0 9 0 12345 1000000 2000 18446744073709551615\n"
	if got := parseProcStat(line); !got.ok || got.ticks != 843 {
		t.Errorf("parseProcStat = %+v, want 843 ticks", got)
	}
	if got := parseProcStat("4242 (ledgerd) S 1"); got.ok {
		t.Errorf("short line parsed: %+v", got)
	}
}
