package mpesatest

import (
	"bytes"
	"cmp"
	"encoding/csv"
	"fmt"
	"slices"
	"time"
)

// ReportRow is one line of an M-Pesa org portal statement.
type ReportRow struct {
	ShortCode  string // the organisation's shortcode whose statement lists it
	Receipt    string
	At         time.Time // Completion Time
	Details    string
	Status     string // Transaction Status: Completed, Failed, ...
	PaidIn     int64  // whole shillings
	Withdrawn  int64
	ReasonType string
	Linked     string // Linked Transaction ID: the receipt a reversal takes back
}

// ReportColumns is the statement's header as the portal's export names
// its columns (see the mpesa package's report reader for the sources).
var ReportColumns = []string{"Receipt No.", "Completion Time", "Initiation Time", "Details", "Transaction Status", "Paid In",
	"Withdrawn", "Balance", "Balance Confirmed", "Reason Type", "Other Party Info", "Linked Transaction ID", "A/C No."}

// ChargeKES is what the fake charges per B2C payment: a line of its own,
// under the payment's receipt.
const ChargeKES = 15

// AddToReport adds a transaction made outside the API to the statement of
// its shortcode: a payout made by hand on the portal, a reversal. Its
// receipt, status (Completed) and time (now) are filled in when not given.
func (s *Server) AddToReport(r ReportRow) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Receipt == "" {
		r.Receipt = s.next("TKH")
	}
	if r.Status == "" {
		r.Status = "Completed"
	}
	if r.At.IsZero() {
		r.At = time.Now()
	}
	s.byHand = append(s.byHand, r)
}

// Report is the statement the org portal exports for shortcode, as CSV:
// a few lines about the statement, then the column header and one line
// per transaction completed in [from, to), oldest first, Withdrawn
// amounts negative, with the running balance from zero.
func (s *Server) Report(shortcode string, from, to time.Time) []byte {
	s.mu.Lock()
	var rows []ReportRow
	for _, p := range s.prompts {
		if p.State == "paid" && shortcode == s.creds.ShortCode {
			rows = append(rows, ReportRow{ShortCode: shortcode, Receipt: p.Receipt, At: p.PaidAt, Status: "Completed", PaidIn: p.Amount,
				Details: "Pay Bill Online from " + p.Phone, ReasonType: "Pay Bill Online"})
		}
	}
	for _, p := range s.payments {
		if shortcode == s.creds.B2CShortCode {
			rows = append(rows, ReportRow{ShortCode: shortcode, Receipt: p.Receipt, At: p.PaidAt, Status: "Completed", Withdrawn: p.Amount,
				Details: "Business Payment to " + p.Phone, ReasonType: "Business Payment to Customer via API"},
				ReportRow{ShortCode: shortcode, Receipt: p.Receipt, At: p.PaidAt, Status: "Completed", Withdrawn: ChargeKES,
					Details: "Business Payment Charge", ReasonType: "Business Payment Charge"})
		}
	}
	for _, r := range s.byHand {
		if r.ShortCode == shortcode {
			rows = append(rows, r)
		}
	}
	s.mu.Unlock()
	slices.SortStableFunc(rows, func(a, b ReportRow) int { return cmp.Compare(a.At.UnixNano(), b.At.UnixNano()) })
	eat := time.FixedZone("EAT", 3*3600)
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	_ = w.WriteAll([][]string{{"Organization Name", "Ledger Test Ltd"}, {"Organization Short Code", shortcode},
		{"Time Period", from.In(eat).Format(time.DateTime) + " - " + to.In(eat).Format(time.DateTime)}, {}})
	_ = w.Write(ReportColumns)
	balance := int64(0)
	for _, r := range rows {
		if r.Status == "Completed" {
			balance += r.PaidIn - r.Withdrawn
		}
		if r.At.Before(from) || !r.At.Before(to) {
			continue
		}
		withdrawn, paidIn := "", ""
		if r.Withdrawn != 0 {
			withdrawn = fmt.Sprintf("-%d.00", r.Withdrawn)
		}
		if r.PaidIn != 0 {
			paidIn = fmt.Sprintf("%d.00", r.PaidIn)
		}
		at := r.At.In(eat).Format(time.DateTime)
		_ = w.Write([]string{r.Receipt, at, at, r.Details, r.Status, paidIn, withdrawn, fmt.Sprintf("%d.00", balance), "true",
			r.ReasonType, "", r.Linked, ""})
	}
	w.Flush()
	return buf.Bytes()
}
