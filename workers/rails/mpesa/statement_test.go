package mpesa

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/workers/rails/mpesa/mpesatest"
	"github.com/ledger/ledger/workers/rails/payout"
	"github.com/ledger/ledger/workers/rails/statement"
)

// reports writes the fake's statements of both shortcodes for [from, to)
// into a directory and returns the statement source over it.
func (e *env) reports(t *testing.T, from, to time.Time) *Reports {
	t.Helper()
	dir := t.TempDir()
	for name, code := range map[string]string{"paybill.csv": creds.ShortCode, "b2c.csv": creds.B2CShortCode} {
		if err := os.WriteFile(filepath.Join(dir, name), e.fake.Report(code, from, to), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return NewReports(dir, e.pool, e.rail.client, e.rail.cfg)
}

func TestReportsStatement(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	from := time.Now().UTC().Truncate(time.Second).Add(-time.Hour)
	to := from.Add(2 * time.Hour)

	// A payment in, a payout whose result came, and one whose result was
	// lost: the rail learns its receipt from Transaction Status.
	id, p := e.prompt(t, e.rail, 1300)
	e.fake.Approve(p.CheckoutID)
	eventually(t, "the deposit", func() bool { return len(e.books.deposited(id)) == 1 })
	paid := e.payoutRequest("2500")
	if _, err := e.rail.Payout(ctx, paid); !errors.Is(err, payout.ErrPending) {
		t.Fatal(err)
	}
	eventually(t, "the result", func() bool { return len(e.books.outcomes(paid.PaymentID)) == 1 })
	e.fake.DropResults(true)
	lost := e.payoutRequest("700")
	if _, err := e.rail.Payout(ctx, lost); !errors.Is(err, payout.ErrPending) {
		t.Fatal(err)
	}
	// By hand on the portal: a payout at the window's first instant, one
	// at its end and one before it (both outside), and a reversal of the
	// paid payout.
	b2c := creds.B2CShortCode
	first := mpesatest.ReportRow{ShortCode: b2c, Receipt: "TKHFIRST01", At: from, Withdrawn: 40, ReasonType: "Business Payment to Customer"}
	e.fake.AddToReport(first)
	e.fake.AddToReport(mpesatest.ReportRow{ShortCode: b2c, Receipt: "TKHEND0001", At: to, Withdrawn: 41})
	e.fake.AddToReport(mpesatest.ReportRow{ShortCode: b2c, Receipt: "TKHBEFORE1", At: from.Add(-time.Second), Withdrawn: 42})
	e.fake.AddToReport(mpesatest.ReportRow{ShortCode: b2c, Receipt: "TKHREVERS1", PaidIn: 2500, ReasonType: "Reversal",
		Linked: e.fake.Payments()[paid.IdempotencyKey].Receipt})

	got, err := e.reports(t, from.Add(-time.Hour), to.Add(time.Hour)).Records(ctx, from, to)
	if err != nil {
		t.Fatal(err)
	}
	receipt := e.fake.Prompts()[0].Receipt
	want := map[string]statement.Record{
		receipt:             {Direction: statement.In, Amount: decimal.NewFromInt(1300), Status: statement.Success},
		paid.IdempotencyKey: {Direction: statement.Out, Amount: decimal.NewFromInt(2500), Status: statement.Reversed},
		lost.IdempotencyKey: {Direction: statement.Out, Amount: decimal.NewFromInt(700), Status: statement.Success},
		first.Receipt:       {Direction: statement.Out, Amount: decimal.NewFromInt(40), Status: statement.Success, At: from},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d records %+v, want %d (no charges, nothing at or past the window's end or before it)", len(got), got, len(want))
	}
	for _, r := range got {
		w, ok := want[r.Ref]
		if !ok || r.Rail != "MOMO" || r.Currency != "KES" || r.Direction != w.Direction || !r.Amount.Equal(w.Amount) || r.Status != w.Status ||
			!w.At.IsZero() && !r.At.Equal(w.At) {
			t.Errorf("got %+v, want %+v", r, w)
		}
	}
	if q := e.fake.StatusQueries(); q != 1 {
		t.Errorf("got %d Transaction Status queries, want one, for the payout without a receipt", q)
	}
}

// A reversal of a payout completed before the window lists that payout,
// reversed, at the reversal's time.
func TestReportsReversalOfAnEarlierPayout(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	r := e.payoutRequest("900")
	if _, err := e.rail.Payout(ctx, r); !errors.Is(err, payout.ErrPending) {
		t.Fatal(err)
	}
	eventually(t, "the result", func() bool { return len(e.books.outcomes(r.PaymentID)) == 1 })
	from := time.Now().UTC().Add(time.Minute)
	e.fake.AddToReport(mpesatest.ReportRow{ShortCode: creds.B2CShortCode, At: from.Add(time.Minute), PaidIn: 900,
		Details: "Reversal of transaction", Linked: e.fake.Payments()[r.IdempotencyKey].Receipt})
	got, err := e.reports(t, from.Add(-time.Hour), from.Add(time.Hour)).Records(ctx, from, from.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Ref != r.IdempotencyKey || got[0].Direction != statement.Out || got[0].Status != statement.Reversed ||
		!got[0].Amount.Equal(decimal.NewFromInt(900)) {
		t.Fatalf("got %+v, want the payout reversed", got)
	}
}

// No statement, an unreadable one, or a Transaction Status Daraja
// refuses: an error, never a statement.
func TestReportsRefuse(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	from, to := time.Now().UTC().Add(-time.Hour), time.Now().UTC().Add(time.Hour)
	if got, err := NewReports(t.TempDir(), e.pool, e.rail.client, e.rail.cfg).Records(ctx, from, to); err == nil {
		t.Errorf("no statement: got %+v and no error", got)
	}
	broken := t.TempDir()
	if err := os.WriteFile(filepath.Join(broken, "b2c.csv"), []byte("Receipt No.,Completion Time,Transaction Status,Paid In,Withdrawn\nTKH1,yesterday,Completed,,-5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := NewReports(broken, e.pool, e.rail.client, e.rail.cfg).Records(ctx, from, to); err == nil {
		t.Errorf("an unreadable statement: got %+v and no error", got)
	}
	e.fake.DropResults(true)
	if _, err := e.rail.Payout(ctx, e.payoutRequest("300")); !errors.Is(err, payout.ErrPending) {
		t.Fatal(err)
	}
	e.fake.SetFault("/mpesa/transactionstatus/v1/query", mpesatest.Fault{Status500: 1})
	if got, err := e.reports(t, from, to).Records(ctx, from, to); err == nil {
		t.Errorf("Transaction Status answered 500: got %+v and no error", got)
	}
	client := NewClient(e.fake.URL(), creds.ConsumerKey, creds.ConsumerSecret, &http.Client{Timeout: 200 * time.Millisecond})
	e.fake.SetFault("/mpesa/transactionstatus/v1/query", mpesatest.Fault{Hang: true})
	s := e.reports(t, from, to)
	s.client = client
	if got, err := s.Records(ctx, from, to); err == nil {
		t.Errorf("Transaction Status never answered: got %+v and no error", got)
	}
}
