package main

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestTwoInstancesPayOutOnce runs 500 payments end to end through two
// ledgerd instances on one Postgres and one NATS, each payment created on
// one and deposited on the other: every payment reaches success once, the
// sandbox rail executed exactly one payout per payment, and every status
// webhook arrived exactly once.
func TestTwoInstancesPayOutOnce(t *testing.T) {
	t.Parallel()
	const n = 500
	p := newPaymentSetup(t, nil)
	b := startServer(t, onStore(p.s, nil))
	servers := []*testServer{p.s, b}
	rc := newReceiver(t, "whsec_c2VjcmV0")

	var next atomic.Int64
	var wg sync.WaitGroup
	ids := make([]string, n)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n || t.Failed() {
					return
				}
				on, other := servers[i%2], servers[(i+1)%2]
				r := on.call(t, http.MethodPost, "/payments", p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":%d,"reference":"n %d",
					"webhookUrl":%q,"webhookSecret":%q}`, p.za, 100+i, i, rc.URL, rc.secret))
				if r.Status != http.StatusCreated {
					t.Errorf("create %d: %d %s", i, r.Status, r.Body)
					return
				}
				var created struct{ ID string }
				mustDecode(t, r.Body, &created)
				ids[i] = created.ID
				if r := other.call(t, http.MethodPost, "/sandbox/payments/"+created.ID+"/deposit", p.tok, ""); r.Status != http.StatusAccepted {
					t.Errorf("deposit %d: %d %s", i, r.Status, r.Body)
					return
				}
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var done, deliveries int
		p.s.queryRow(t, `SELECT count(*) FROM payments WHERE status = 'success'`, nil, &done)
		deliveries = len(rc.deliveries())
		if done == n && deliveries >= 4*n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 2 minutes: %d of %d payments succeeded, %d of %d webhooks delivered", done, n, deliveries, 4*n)
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // nothing more may come

	var payouts, doubled, paid int
	p.s.queryRow(t, `SELECT count(*), count(DISTINCT payment_id), coalesce(max(c), 0) FROM sandbox_payouts
		JOIN (SELECT payment_id, count(*) AS c FROM sandbox_payouts WHERE NOT refund GROUP BY payment_id) per USING (payment_id)
		WHERE NOT refund`, nil,
		&payouts, &paid, &doubled)
	if payouts != n || paid != n || doubled != 1 {
		t.Errorf("sandbox payouts: got %d payouts for %d payments (at most %d for one), want %d, %d, 1", payouts, paid, doubled, n, n)
	}
	seen := map[string]int{}
	for _, d := range rc.deliveries() {
		seen[d.ID]++
		if !d.Verified {
			t.Errorf("delivery %s of %s does not verify", d.ID, d.Type)
		}
	}
	if len(seen) != 4*n {
		t.Errorf("webhooks: %d distinct events delivered, want %d", len(seen), 4*n)
	}
	for id, c := range seen {
		if c != 1 {
			t.Errorf("webhook %s delivered %d times", id, c)
		}
	}
}
