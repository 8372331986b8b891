package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/gorilla/mux"

	"github.com/ledger/ledger/domain"
)

// queryEndpoint is one operation that reads query parameters.
type queryEndpoint struct {
	name   string
	h      handlerFunc
	caller Caller
	vars   map[string]string
	params []string // the query parameters it reads
	seeds  []string
}

// unread marks readArgs members no read-side fake has set.
var unread = readArgs{limit: -1, after: -1, eventType: "-", status: "-"}

// FuzzQuery sends any raw query to every handler that reads one: never a
// 5xx; a refusal names only parameters the operation reads; what passes
// reaches the read model within bounds: a limit from 1 to 100 (100 when
// absent), a position from 0, a catalogued event type, a listed status.
// Offset markers are passed through as sent; projections decode them
// (FuzzOffsetMarker).
func FuzzQuery(f *testing.F) {
	fx := newFixture(f)
	endpoints := queryEndpoints(fx)
	for i, ep := range endpoints {
		for _, seed := range append(ep.seeds, "", "limit=0", "limit=101", "limit=1&limit=2", "limit=+5", "limit=%zz", "a=%") {
			f.Add(uint8(i), seed)
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, query string) {
		ep := endpoints[int(which)%len(endpoints)]
		*fx.reads = unread
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.URL.RawQuery = query
		r = mux.SetURLVars(r, ep.vars)
		r = r.WithContext(context.WithValue(r.Context(), callerKey{}, ep.caller))
		rec := httptest.NewRecorder()
		fx.s.route(ep.h).ServeHTTP(rec, r)
		switch {
		case rec.Code >= 500:
			t.Fatalf("%s ?%s: got %d %s, want no 5xx", ep.name, query, rec.Code, rec.Body)
		case rec.Code >= 400:
			var p problem
			if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || p.Code == "" {
				t.Fatalf("%s ?%s: got %d %s, want problem+json with a code", ep.name, query, rec.Code, rec.Body)
			}
			for _, fe := range p.Errors {
				if !slices.Contains(ep.params, fe.Field) {
					t.Fatalf("%s ?%s: error names %q, want one of %v", ep.name, query, fe.Field, ep.params)
				}
			}
		default:
			checkReads(t, ep, query, *fx.reads, r.URL.Query().Get("limit"))
		}
	})
}

// checkReads fails unless what the read model was asked is within bounds.
func checkReads(t *testing.T, ep queryEndpoint, query string, got readArgs, limit string) {
	t.Helper()
	if got.limit != unread.limit && (got.limit < 1 || got.limit > 100 || limit == "" && got.limit != 100) {
		t.Fatalf("%s ?%s: read a page of %d, want 1 to 100, 100 when not given", ep.name, query, got.limit)
	}
	if got.after != unread.after && got.after < 0 {
		t.Fatalf("%s ?%s: read after position %d, want 0 or more", ep.name, query, got.after)
	}
	if _, ok := domain.LookupEvent(got.eventType); got.eventType != unread.eventType && got.eventType != "" && !ok {
		t.Fatalf("%s ?%s: read event type %q, want a catalogued one", ep.name, query, got.eventType)
	}
	statuses := append([]string{"", domain.UserActive, domain.UserInactive}, domain.PaymentStatuses...)
	if got.status != unread.status && !slices.Contains(statuses, got.status) {
		t.Fatalf("%s ?%s: read status %q, want one of %q", ep.name, query, got.status, statuses)
	}
}

// queryEndpoints are the operations that read query parameters, with seeds.
func queryEndpoints(fx *fixture) []queryEndpoint {
	user := map[string]string{"userId": fx.user.ID.String()}
	payment := map[string]string{"paymentId": fx.payment.ID.String()}
	return []queryEndpoint{
		{name: "GET /users", h: fx.s.listUsers, caller: fx.tenant, params: []string{"status", "limit", "offset"},
			seeds: []string{"status=inactive&limit=10", "status=Active", "offset=dXNlcnN8eA"}},
		{name: "GET /users/{userId}/kyc-documents", h: fx.s.listKYCDocuments, caller: fx.tenant, vars: user,
			params: []string{"limit", "offset"}, seeds: []string{"limit=1&offset=x"}},
		{name: "GET /merchants", h: fx.s.listMerchants, caller: fx.tenant, params: []string{"limit", "offset"},
			seeds: []string{"limit=100"}},
		{name: "GET /payments", h: fx.s.listPayments, caller: fx.tenant, params: []string{"limit", "offset", "status", "merchantId"},
			seeds: []string{"status=created&limit=10&merchantId=" + fx.za.String(), "status=CREATED", "merchantId=x"}},
		{name: "GET /payments as the user", h: fx.s.listPayments, caller: fx.self, params: []string{"limit", "offset", "status", "merchantId"},
			seeds: []string{"status=success"}},
		{name: "GET /payments/{paymentId}", h: fx.s.getPayment, caller: fx.tenant, vars: payment, params: []string{"includeStatusLog", "asOf"},
			seeds: []string{"includeStatusLog=true&asOf=2026-11-22T10:15:30.123Z", "includeStatusLog=1", "asOf=2026-11-22", "asOf=2026-11-22T10:15:30+02:00"}},
		{name: "GET /payments/{paymentId}/documents", h: fx.s.listPaymentDocuments, caller: fx.tenant, vars: payment,
			params: []string{"limit", "offset"}, seeds: []string{"limit=5"}},
		{name: "GET /events", h: fx.s.listEvents, caller: fx.tenant, params: []string{"after", "limit", "type"},
			seeds: []string{"after=0&limit=100&type=payment.created", "type=ledger.payment.created.v1", "type=ledger.payment.created.v2",
				"type=ledger.payment.created", "after=-1", "after=9223372036854775808", "type=ledger..v1"}},
		{name: "GET /ledger/balances", h: fx.s.trialBalance, caller: fx.tenant, params: []string{"asOf"},
			seeds: []string{"asOf=2026-11-22T10:15:30.123Z", "asOf=x"}},
		{name: "GET /utils/banks", h: fx.s.listBanks, caller: fx.tenant, params: []string{"country"},
			seeds: []string{"country=SouthAfrica", "country=BTC"}},
		{name: "GET /sandbox/payouts", h: fx.s.sandboxPayouts, caller: fx.tenant, params: []string{"paymentId"},
			seeds: []string{"paymentId=" + fx.payment.ID.String(), "paymentId=x"}},
	}
}
