package mpesa

import (
	"bytes"
	"testing"
	"time"

	"github.com/ledger/ledger/workers/rails/mpesa/mpesatest"
)

// FuzzParseReport: any input parses or errs without panicking, and every
// line it accepts is one transaction an operator can find and match: a
// line number, a receipt of letters and digits, a time, a status and
// exactly one positive amount.
func FuzzParseReport(f *testing.F) {
	at := time.Date(2026, 11, 28, 9, 30, 0, 0, time.UTC)
	s, err := mpesatest.Start(f, mpesatest.Credentials{ShortCode: "174379", B2CShortCode: "600997"})
	if err != nil {
		f.Fatal(err)
	}
	defer s.Close()
	s.AddToReport(mpesatest.ReportRow{ShortCode: "600997", Receipt: "TKH1", At: at, Withdrawn: 1500, ReasonType: "Business Payment"})
	s.AddToReport(mpesatest.ReportRow{ShortCode: "600997", Receipt: "TKH2", At: at, PaidIn: 1500, ReasonType: "Reversal", Linked: "TKH1"})
	f.Add(s.Report("600997", at.Add(-time.Hour), at.Add(time.Hour)))
	f.Add([]byte("Receipt No.,Completion Time,Transaction Status,Paid In,Withdrawn\nQKH3ABC123,2026-11-28 12:39:42,Completed,\"1,300.50\",\n"))
	f.Add([]byte("\ufeffReceipt No.,Withdrawn,Paid In,Transaction Status,Completion Time\nA1,-5,,Failed,2026-11-28T00:00:00\n\n"))
	f.Add([]byte("Receipt No.,Completion Time,Transaction Status,Paid In,Withdrawn\nA1,2026-11-28 00:00:00,Completed,1,1\n"))
	f.Add([]byte("\"unterminated"))
	f.Fuzz(func(t *testing.T, b []byte) {
		rows, err := ParseReport(bytes.NewReader(b))
		if err != nil {
			return
		}
		for _, r := range rows {
			if r.Line < 1 || r.Receipt == "" || r.At.IsZero() || r.Status == "" || r.PaidIn.IsNegative() || r.Withdrawn.IsNegative() ||
				r.PaidIn.IsPositive() == r.Withdrawn.IsPositive() {
				t.Fatalf("accepted %+v from %q", r, b)
			}
		}
	})
}
