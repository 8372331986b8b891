package dashboard

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/domain"
)

// fakeBreaks holds breaks and decides resolutions with the domain's rule.
type fakeBreaks struct {
	mu     sync.Mutex
	breaks []domain.Break
	actors []string // the metadata actor of each resolution
}

func newFakeBreaks() *fakeBreaks {
	at := time.Date(2026, 11, 25, 2, 30, 0, 0, time.UTC)
	return &fakeBreaks{breaks: []domain.Break{
		{ID: uuid.New(), Kind: domain.BreakAmountDiffers, Rail: "BANK", Ref: "pay-off-by-a-cent", Status: domain.BreakOpen, FoundAt: at,
			Provider: &domain.BreakSide{Direction: "out", Amount: decimal.RequireFromString("10.01"), Currency: "ZAR", Status: "success"},
			Ledger:   &domain.BreakSide{Direction: "out", Amount: decimal.RequireFromString("10"), Currency: "ZAR", Status: "success"}},
		{ID: uuid.New(), Kind: domain.BreakProviderOnly, Rail: "BANK", Ref: "paid-by-hand", Status: domain.BreakResolved, FoundAt: at,
			Reason: "booked on ticket 7", ResolvedBy: "operator:ann",
			Provider: &domain.BreakSide{Direction: "out", Amount: decimal.NewFromInt(250), Currency: "ZAR", Status: "success"}},
	}}
}

func (f *fakeBreaks) ListBreaks(_ context.Context, status string) ([]domain.Break, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []domain.Break
	for _, b := range f.breaks {
		if status == "" || b.Status == status {
			out = append(out, b)
		}
	}
	return out, nil
}

func (f *fakeBreaks) ResolveBreak(_ context.Context, id uuid.UUID, reason, by string, meta domain.Metadata) (domain.Break, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, b := range f.breaks {
		if b.ID != id {
			continue
		}
		events, err := domain.DecideResolveBreak(b, domain.ResolveBreak{Reason: reason, By: by, Now: time.Now()})
		if err != nil {
			return b, err
		}
		f.breaks[i] = domain.ApplyBreak(b, events[0])
		f.actors = append(f.actors, meta.Actor)
		return f.breaks[i], nil
	}
	return domain.Break{}, domain.ErrNotFound
}

// TestReconciliationPage: the operator's dashboard user lists the open
// breaks (all with ?status=all) and resolves one with a reason, as
// themselves; a reason left empty is refused and changes nothing; a
// tenant's user finds neither the page, nor its link, nor the form.
func TestReconciliationPage(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fakeCredentials{})
	open := h.breaks.breaks[0].ID

	h.signIn()
	for _, path := range []string{"/dashboard/reconciliation", "/dashboard/reconciliation?status=all"} {
		if rec := h.get(path); rec.Code != http.StatusNotFound {
			t.Errorf("a tenant's user, GET %s: got %d, want 404", path, rec.Code)
		}
	}
	if page := body(h.get("/dashboard/unmatched")); strings.Contains(page, "/dashboard/reconciliation") {
		t.Error("a tenant's user is shown the reconciliation link")
	}
	if rec := h.post("/dashboard/reconciliation/"+open.String()+"/resolve", url.Values{"reason": {"x"}}, true); rec.Code != http.StatusNotFound {
		t.Errorf("a tenant's user resolving: got %d, want 404", rec.Code)
	}

	opsID := h.signInOperator()
	page := body(h.get("/dashboard/reconciliation"))
	for _, want := range []string{"pay-off-by-a-cent", "out 10.01 ZAR, success", "out 10.00 ZAR, success", `aria-current="page">Reconciliation`,
		`action="/dashboard/reconciliation/` + open.String() + `/resolve"`, `href="/dashboard/reconciliation/runs"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the open breaks lack %q", want)
		}
	}
	if strings.Contains(page, "paid-by-hand") {
		t.Error("a resolved break is listed among the open ones")
	}
	if all := body(h.get("/dashboard/reconciliation?status=all")); !strings.Contains(all, "paid-by-hand") || !strings.Contains(all, "booked on ticket 7") {
		t.Error("?status=all lacks the resolved break and its reason")
	}

	if rec := h.post("/dashboard/reconciliation/"+open.String()+"/resolve", url.Values{"reason": {"  "}}, true); rec.Code != http.StatusBadRequest {
		t.Errorf("an empty reason: got %d, want 400", rec.Code)
	}
	if rec := h.post("/dashboard/reconciliation/"+open.String()+"/resolve", url.Values{"reason": {"fee"}}, false); rec.Code == http.StatusSeeOther {
		t.Error("a resolution without the CSRF token was taken")
	}
	if h.breaks.breaks[0].Status != domain.BreakOpen {
		t.Fatal("a refused resolution changed the break")
	}
	rec := h.post("/dashboard/reconciliation/"+open.String()+"/resolve", url.Values{"reason": {"bank fee, booked by hand"}}, true)
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/dashboard/reconciliation" {
		t.Fatalf("resolve: got %d to %q (%s)", rec.Code, rec.Header().Get("Location"), body(rec))
	}
	b, actor := h.breaks.breaks[0], "dashboard_user:"+opsID.String()
	if b.Status != domain.BreakResolved || b.Reason != "bank fee, booked by hand" || b.ResolvedBy != actor || h.breaks.actors[0] != actor {
		t.Errorf("resolved: got %+v by %v, want resolved by %s with the reason", b, h.breaks.actors, actor)
	}
	if rec := h.post("/dashboard/reconciliation/"+uuid.NewString()+"/resolve", url.Values{"reason": {"x"}}, true); rec.Code != http.StatusNotFound {
		t.Errorf("an unknown break: got %d, want 404", rec.Code)
	}
}

// signInOperator signs in, in place of whoever was, a new dashboard user
// of the operator's books, and returns their id.
func (h *harness) signInOperator() uuid.UUID {
	h.t.Helper()
	id := h.accounts.add(domain.OperatorBooks, "ops@operator.example", testPassword, "")
	h.cookies = map[string]*http.Cookie{}
	rec := h.post("/dashboard/sign-in", url.Values{"email": {"ops@operator.example"}, "password": {testPassword}}, true)
	if rec.Code != http.StatusSeeOther {
		h.t.Fatalf("operator sign in: got %d (%s)", rec.Code, body(rec))
	}
	return id
}
