package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ledger/ledger/workers/rails/mpesa/mpesatest"
)

// TestProductionMPesaCallbackToTwoProcesses: two production ledgerd
// processes on one database each receive the same STK callback, and then
// the same B2C result, several times at once (Daraja retries, and a load
// balancer may hand the copies to different processes). The payment is
// deposited once and paid out once, and every copy is acknowledged with
// 200 and ResultCode 0, so Daraja has nothing to send again.
func TestProductionMPesaCallbackToTwoProcesses(t *testing.T) {
	t.Parallel()
	fake := mpesatest.NewServer(t, mpesaCreds)
	// The fake sends nothing itself: the test delivers each callback.
	fake.DropCallbacks(true)
	p, env, _ := productionMPesa(t, fake, nil)
	public := env["LEDGER_PUBLIC_URL"]
	other := startServer(t, env)
	processes := []string{p.s.URL, other.URL}

	id := p.pay(t, p.utok, fmt.Sprintf(`{"merchantId":%q,"amount":1000,"reference":"r","fromCountry":"Kenya"}`, p.keMomo))["id"].(string)
	deadline := time.Now().Add(10 * time.Second)
	for len(fake.Prompts()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no prompt was sent")
		}
		time.Sleep(20 * time.Millisecond)
	}
	checkout := fake.Prompts()[0].CheckoutID
	fake.Approve(checkout)
	prompt := fake.Prompts()[0]
	if prompt.CheckoutID != checkout || prompt.State != "paid" {
		t.Fatalf("got prompt %+v, want %s paid", prompt, checkout)
	}
	deliverToAll(t, processes, strings.TrimPrefix(prompt.CallbackURL, public), mpesatest.STKCallback(prompt, time.Now()))

	p.waitFor(t, id, 20*time.Second, func(m map[string]any) bool { return m["status"] == "transferring" })
	var pay mpesatest.Payment
	for {
		var ok bool
		if pay, ok = fake.Payments()[id]; ok {
			break
		}
		if time.Now().After(deadline.Add(10 * time.Second)) {
			t.Fatal("no B2C payment was asked for")
		}
		time.Sleep(10 * time.Millisecond)
	}
	deliverToAll(t, processes, strings.TrimPrefix(pay.ResultURL, public), mpesatest.B2CResult(pay, 0))

	got := p.waitFor(t, id, 20*time.Second, statusIs("success"))
	if s := statuses(got); !slices.Equal(s, []string{"created", "deposited", "transferring", "success"}) {
		t.Errorf("statusLogs: got %v", s)
	}
	if n := p.s.depositEvents(t, id); n != 1 {
		t.Errorf("deposit events: got %d, want 1", n)
	}
	// From the events table itself: GET /payments/{id}/events shows only
	// events the sequencer has positioned, which may lag the read model.
	var types string
	p.s.queryRow(t, `SELECT string_agg(type, ' ' ORDER BY stream_version) FROM events WHERE stream_id = $1`, []any{id}, &types)
	if types != "payment.created payment.deposited payment.transferring payment.success" {
		t.Errorf("events: got %s, want the deposit and the payout once", types)
	}
	payments := fake.Payments()
	if len(payments) != 1 || payments[id].Requests != 1 || len(fake.Prompts()) != 1 || got["amountSettled"] != float64(pay.Amount) {
		t.Errorf("got B2C payments %+v, %d prompts and %v settled; want one request, one prompt and %d",
			payments, len(fake.Prompts()), got["amountSettled"], pay.Amount)
	}
}

// deliverToAll posts body to path on every process, three copies to each,
// all released at once, and fails unless each copy is acknowledged as
// Daraja expects (200, ResultCode 0).
func deliverToAll(t *testing.T, processes []string, path string, body []byte) {
	t.Helper()
	const copies = 3
	start := make(chan struct{})
	answers := make([]string, len(processes)*copies)
	var wg sync.WaitGroup
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			r, err := http.Post(processes[i%len(processes)]+path, "application/json", bytes.NewReader(body))
			if err != nil {
				answers[i] = err.Error()
				return
			}
			defer r.Body.Close()
			b, _ := io.ReadAll(r.Body)
			answers[i] = fmt.Sprintf("%d %s", r.StatusCode, b)
		}()
	}
	close(start)
	wg.Wait()
	for i, a := range answers {
		if a != `200 {"ResultCode":0,"ResultDesc":"Accepted"}` {
			t.Errorf("copy %d of %s to process %d: got %s, want 200 and ResultCode 0", i, path, i%len(processes), a)
		}
	}
}
