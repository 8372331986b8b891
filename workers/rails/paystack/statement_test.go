package paystack

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/workers/rails/paystack/paystacktest"
	"github.com/ledger/ledger/workers/rails/statement"
)

// byRef indexes records by Ref, failing on a Ref listed twice.
func byRef(t *testing.T, records []statement.Record) map[string]statement.Record {
	t.Helper()
	m := map[string]statement.Record{}
	for _, r := range records {
		if _, dup := m[r.Ref]; dup {
			t.Fatalf("%s listed twice", r.Ref)
		}
		m[r.Ref] = r
	}
	return m
}

func TestStatementWindow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	from := time.Now().UTC().Truncate(time.Hour).Add(-24 * time.Hour)
	to := from.Add(24 * time.Hour)
	at := func(d time.Duration) paystacktest.Transfer {
		return e.fake.MakeByHand(paystacktest.Transfer{Amount: 1000, Currency: "NGN", CreatedAt: from.Add(d)})
	}
	first, last := at(0), at(24*time.Hour-time.Millisecond)
	before, atEnd := at(-time.Millisecond), at(24*time.Hour)
	pending := at(time.Hour)
	e.fake.Settle(pending.Reference, "pending")

	got, err := NewStatement(e.rail.client).Records(ctx, from, to)
	if err != nil {
		t.Fatal(err)
	}
	m := byRef(t, got)
	if len(m) != 3 {
		t.Fatalf("got %d records, want 3 (the window's first and last instants, and the pending one): %+v", len(m), got)
	}
	for _, out := range []paystacktest.Transfer{before, atEnd} {
		if _, ok := m[out.Reference]; ok {
			t.Errorf("%s created at %s is outside [%s, %s)", out.Reference, out.CreatedAt, from, to)
		}
	}
	want := statement.Record{Rail: "BANK", Ref: first.Reference, Direction: statement.Out, Amount: decimal.RequireFromString("10"),
		Currency: "NGN", Status: statement.Success, At: first.CreatedAt}
	if r := m[first.Reference]; r.Rail != want.Rail || r.Direction != want.Direction || !r.Amount.Equal(want.Amount) ||
		r.Currency != want.Currency || r.Status != want.Status || !r.At.Equal(want.At) {
		t.Errorf("got %+v, want %+v", r, want)
	}
	if r := m[last.Reference]; r.Status != statement.Success {
		t.Errorf("last: got %+v", r)
	}
	if r := m[pending.Reference]; r.Status != statement.Pending {
		t.Errorf("pending: got status %s, want pending", r.Status)
	}
}

// A payout of the rail, reversed after success, and a transfer made by
// hand on the dashboard, over several pages.
func TestStatementPayoutsReversalAndByHand(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	from := time.Now().UTC().Add(-time.Minute)
	var refs []string
	for range 3 {
		r := e.za()
		e.mustPending(t, e.rail, r)
		e.fake.Settle(r.IdempotencyKey, "success")
		refs = append(refs, r.IdempotencyKey)
	}
	e.fake.Settle(refs[0], "reversed")
	hand := e.fake.MakeByHand(paystacktest.Transfer{Amount: 99, Currency: "ZAR"})

	s := NewStatement(e.rail.client)
	s.perPage = 2
	got, err := s.Records(ctx, from, time.Now().UTC().Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	m := byRef(t, got)
	if len(m) != 4 {
		t.Fatalf("got %d records over pages of 2, want 4: %+v", len(m), got)
	}
	if r := m[refs[0]]; r.Status != statement.Reversed || !r.Amount.Equal(decimal.RequireFromString("1500.25")) || r.Currency != "ZAR" {
		t.Errorf("reversed payout: got %+v", r)
	}
	for _, ref := range refs[1:] {
		if r := m[ref]; r.Status != statement.Success {
			t.Errorf("payout %s: got %+v", ref, r)
		}
	}
	if r := m[hand.Reference]; r.Status != statement.Success || !r.Amount.Equal(decimal.RequireFromString("0.99")) {
		t.Errorf("by hand: got %+v", r)
	}
}

// A provider that fails or never answers, on any page or on a
// verification, fails the statement: never a shorter one.
func TestStatementProviderErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	from := time.Now().UTC().Add(-time.Hour)
	for range 3 {
		e.fake.MakeByHand(paystacktest.Transfer{Amount: 500, Currency: "KES", CreatedAt: from.Add(time.Minute)})
	}
	e.fake.MakeByHand(paystacktest.Transfer{Amount: 500, Currency: "KES", Status: "pending", CreatedAt: from.Add(time.Minute)})
	client := func(rt http.RoundTripper) *Client {
		return NewClient(e.fake.URL(), testSecret, &http.Client{Timeout: 300 * time.Millisecond, Transport: rt})
	}
	cases := []struct {
		name   string
		client *Client
		fault  func()
	}{
		{"first page 500", client(nil), func() { e.fake.FailNext("GET /transfer", 1) }},
		{"second page 500", client(pageFault{page: "2"}), func() {}},
		{"timeout", client(nil), func() { e.fake.HangNext("GET /transfer", 1) }},
		{"verify 500", client(nil), func() { e.fake.FailNext("GET /transfer/verify", 1) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := NewStatement(c.client)
			s.perPage = 2
			c.fault()
			if got, err := s.Records(ctx, from, time.Now().UTC()); err == nil {
				t.Fatalf("got %d records and no error", len(got))
			}
		})
	}
	// Faults spent, the same statement reads whole.
	got, err := NewStatement(client(nil)).Records(ctx, from, time.Now().UTC())
	if err != nil || len(got) != 4 {
		t.Fatalf("got %d records, %v; want 4", len(got), err)
	}
}

// pageFault answers one page of the list as Paystack's 500 would, and
// passes every other request to the fake.
type pageFault struct{ page string }

func (f pageFault) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Path == "/transfer" && r.URL.Query().Get("page") == f.page {
		return &http.Response{StatusCode: http.StatusInternalServerError, Request: r, Header: http.Header{},
			Body: io.NopCloser(strings.NewReader(`{"status":false,"message":"An error occurred"}`))}, nil
	}
	return http.DefaultTransport.RoundTrip(r)
}
