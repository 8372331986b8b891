package dashboard

import (
	"net/http"
	"testing"

	"github.com/google/uuid"
)

// TestReadsUseTheSessionTenant: every page reads the session's tenant,
// whatever tenant the URL names.
func TestReadsUseTheSessionTenant(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fakeCredentials{})
	h.signIn()
	other := uuid.NewString()
	for _, path := range []string{"/dashboard/users?q=ann&tenant=" + other, "/dashboard/users/" + uuid.NewString() + "?tenantId=" + other,
		"/dashboard/events?type=payment.created&tenant=" + other, "/dashboard/balances?tenant=" + other, "/dashboard/unmatched?tenant=" + other} {
		if rec := h.get(path); rec.Code != http.StatusOK {
			t.Errorf("GET %s: got %d, want 200 (%s)", path, rec.Code, body(rec))
		}
	}
	reads := h.reads.all()
	if len(reads) < 4 {
		t.Fatalf("reads: got %d, want one or more per page", len(reads))
	}
	for _, tenant := range reads {
		if tenant != h.tenant {
			t.Errorf("a read of tenant %s: want only the session's %s", tenant, h.tenant)
		}
	}
}

func TestEventsPageRefusesUnknownTypes(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fakeCredentials{})
	h.signIn()
	for _, q := range []string{"type=payment.paid", "after=-1", "after=x"} {
		if rec := h.get("/dashboard/events?" + q); rec.Code != http.StatusBadRequest {
			t.Errorf("?%s: got %d, want 400", q, rec.Code)
		}
	}
}
