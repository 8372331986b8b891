package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gowebpki/jcs"

	"github.com/ledger/ledger/domain"
)

// recomputeHash is what an auditor does with an event from the API
// (contract §9): SHA-256 over prevhash, a newline and the RFC 8785
// canonical JSON of the envelope without hash and prevhash.
func recomputeHash(e domain.CloudEvent) (string, error) {
	raw, err := json.Marshal(e)
	if err != nil {
		return "", err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return "", err
	}
	delete(m, "hash")
	delete(m, "prevhash")
	raw, _ = json.Marshal(m)
	canonical, err := jcs.Transform(raw)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(append([]byte(e.PrevHash+"\n"), canonical...))
	return hex.EncodeToString(sum[:]), nil
}

// eventList is a page of GET /events or a stream's history.
type eventList struct {
	Items        []domain.CloudEvent `json:"items"`
	LastPosition *int64              `json:"lastPosition"`
}

func (p paymentSetup) events(t *testing.T, tok, path string) eventList {
	t.Helper()
	r := p.s.call(t, http.MethodGet, path, tok, "")
	mustStatus(t, r, http.StatusOK)
	var l eventList
	mustDecode(t, r.Body, &l)
	return l
}

// TestEventHistoryAPI covers GET /events (position order, paging by
// after, type filter, tenant scope, a hash chain anyone can recompute),
// the payment's and the user's histories, GET /payments/{id}?asOf= and the
// trial balance of the postings.
func TestEventHistoryAPI(t *testing.T) {
	t.Parallel()
	p := newPaymentSetup(t, nil)
	id := p.pay(t, p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":1500,"reference":"r","bufferRate":0.05}`, p.za))["id"].(string)
	time.Sleep(20 * time.Millisecond)
	beforeDeposit := time.Now().UTC()
	time.Sleep(20 * time.Millisecond)
	mustStatus(t, p.s.call(t, http.MethodPost, "/sandbox/payments/"+id+"/deposit", p.tok, ""), http.StatusAccepted)
	// Paid out, and the change of its anonymous Lightning payer queued for an operator.
	p.waitFor(t, id, 20*time.Second, func(p map[string]any) bool { return p["changeRefundStatus"] == "queued" })

	// Every event is sequenced within a second of its commit.
	var all []domain.CloudEvent
	deadline := time.Now().Add(10 * time.Second)
	for {
		var stored int
		p.s.queryRow(t, `SELECT count(*) FROM events e JOIN tenants t ON t.id = e.tenant_id WHERE t.name = 'Payco'`, nil, &stored)
		all = nil
		for after := int64(0); ; {
			page := p.events(t, p.tok, fmt.Sprintf("/events?limit=3&after=%d", after))
			all = append(all, page.Items...)
			if page.LastPosition == nil {
				break
			}
			after = *page.LastPosition
		}
		if len(all) == stored || time.Now().After(deadline) {
			if len(all) != stored {
				t.Fatalf("GET /events: got %d events, want the tenant's %d", len(all), stored)
			}
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	prev := strings.Repeat("0", 64)
	for i, e := range all {
		if i > 0 && e.Position <= all[i-1].Position {
			t.Fatalf("positions out of order at %d", i)
		}
		if e.PrevHash != prev {
			t.Fatalf("event %d: prevhash %s, want the previous hash %s", i, e.PrevHash, prev)
		}
		if h, err := recomputeHash(e); err != nil || h != e.Hash {
			t.Fatalf("event %d: recomputed hash %s (%v), stored %s", i, h, err, e.Hash)
		}
		prev = e.Hash
	}
	created := p.events(t, p.tok, "/events?type=ledger.payment.created.v1").Items
	short := p.events(t, p.tok, "/events?type=payment.created").Items
	if len(created) != 1 || len(short) != 1 || created[0].ID != short[0].ID {
		t.Errorf("type filter: got %d and %d events", len(created), len(short))
	}
	for _, q := range []string{"?type=payment.paid", "?type=ledger.payment.created.v9", "?after=-1", "?after=x", "?limit=0"} {
		mustProblem(t, p.s.call(t, http.MethodGet, "/events"+q, p.tok, ""), http.StatusBadRequest, "validation_failed")
	}
	mustProblem(t, p.s.call(t, http.MethodGet, "/events", p.utok, ""), http.StatusForbidden, "")
	for _, e := range p.events(t, p.otherTok, "/events").Items {
		if e.TenantID == all[0].TenantID {
			t.Fatal("another tenant's GET /events shows this tenant's events")
		}
	}

	var types []string
	for _, e := range p.events(t, p.tok, "/payments/"+id+"/events").Items {
		types = append(types, e.Type)
	}
	if !slices.Equal(types, []string{"ledger.payment.created.v1", "ledger.payment.deposited.v1",
		"ledger.payment.transferring.v1", "ledger.payment.success.v1", "ledger.payment.change_refund_queued.v1"}) {
		t.Errorf("payment history: got %v", types)
	}
	userHistory := p.events(t, p.utok, "/users/"+p.userID+"/events").Items
	if len(userHistory) < 2 || userHistory[0].Type != "ledger.user.created.v1" {
		t.Errorf("user history: got %v", userHistory)
	}

	then := mustStatus(t, p.s.call(t, http.MethodGet, "/payments/"+id+"?includeStatusLog=true&asOf="+beforeDeposit.Format(time.RFC3339Nano), p.tok, ""), http.StatusOK)
	if then["status"] != "created" || len(then["statusLogs"].([]any)) != 1 {
		t.Errorf("asOf before the deposit: got %v with %v", then["status"], then["statusLogs"])
	}
	mustProblem(t, p.s.call(t, http.MethodGet, "/payments/"+id+"?asOf=2020-01-01T00:00:00Z", p.tok, ""), http.StatusNotFound, "not_found")
	mustProblem(t, p.s.call(t, http.MethodGet, "/payments/"+id+"?asOf=yesterday", p.tok, ""), http.StatusBadRequest, "validation_failed")

	var tb struct {
		Items []struct {
			Account, Currency string
			Balance           json.Number
		}
		Totals []struct {
			Currency string
			Balanced bool
		}
	}
	r := p.s.call(t, http.MethodGet, "/ledger/balances", p.tok, "")
	mustStatus(t, r, http.StatusOK)
	mustDecode(t, r.Body, &tb)
	if len(tb.Totals) != 2 {
		t.Errorf("trial balance: got totals %+v, want sats and ZAR", tb.Totals)
	}
	for _, tot := range tb.Totals {
		if !tot.Balanced {
			t.Errorf("trial balance: %s does not balance", tot.Currency)
		}
	}
	for _, it := range tb.Items {
		if it.Account == "external:BANK" && it.Balance.String() != "-1500" {
			t.Errorf("external:BANK: got %s, want -1500 paid out", it.Balance)
		}
	}
	mustProblem(t, p.s.call(t, http.MethodGet, "/ledger/balances", p.utok, ""), http.StatusForbidden, "")
	early := mustStatus(t, p.s.call(t, http.MethodGet, "/ledger/balances?asOf=2020-01-01T00:00:00Z", p.tok, ""), http.StatusOK)
	if len(early["items"].([]any)) != 0 {
		t.Errorf("balances before anything happened: got %v", early["items"])
	}
}
