package mpesa

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// MaxReportSize bounds a statement file: a busy shortcode's month is a
// few megabytes.
const MaxReportSize = 64 << 20

// ReportRow is one transaction of an M-Pesa org portal statement.
type ReportRow struct {
	Line       int // in the file, from 1, for an operator to find it
	Receipt    string
	At         time.Time       // Completion Time
	Status     string          // Transaction Status: Completed, Failed, Cancelled, Expired, Declined, Pending, ...
	PaidIn     decimal.Decimal // whole or decimal shillings, at least zero
	Withdrawn  decimal.Decimal // at least zero, whichever sign the file gave it
	ReasonType string          // "Pay Bill Online", "Business Payment to Customer via API", "Business Payment Charge", "Reversal", ...
	Details    string
	Linked     string // Linked Transaction ID: for a reversal, the receipt it takes back
}

// reportColumns are the columns the reader needs, by the header's names.
var reportColumns = []string{"Receipt No.", "Completion Time", "Transaction Status", "Paid In", "Withdrawn"}

// ParseReport reads the statement (CSV) the M-Pesa org portal exports for
// a shortcode. Its columns, named by its header line (Receipt No.,
// Completion Time, Initiation Time, Details, Transaction Status, Paid In,
// Withdrawn, Balance, Balance Confirmed, Reason Type, Other Party Info,
// Linked Transaction ID, A/C No.), are found by name, in any order; the
// lines before the header (the organisation, the period) are skipped.
// Safaricom publishes no specification of the file; the columns are as
// ERP import tables of it name them (github.com/ochiengcalvince578/KRB-ERP-SourceCode,
// src/Tables/Tab56118.SwizzKashPaybillBuffer.al) and as Mifos's M-PESA
// import describes them (a preamble before the header, dates YYYY-MM-DD
// HH:MM:SS, statuses Completed, Attempted, Cancelled, Declined, amounts
// that may carry thousands separators:
// https://mifosforge.jira.com/wiki/pages/diffpagesbyversion.action?pageId=6259039
// and pageId=5275655). Times are Nairobi's (East Africa Time).
//
// Every line after the header must be a transaction: a receipt, a
// completion time, a status and one amount, paid in or withdrawn. A line
// that is not fails the whole file (it is money an operator must look
// at), with its line number.
func ParseReport(r io.Reader) ([]ReportRow, error) {
	lr := &io.LimitedReader{R: r, N: MaxReportSize + 1}
	cr := csv.NewReader(lr)
	cr.FieldsPerRecord = -1 // the preamble's lines are shorter than the table's
	cr.ReuseRecord = true
	var cols map[string]int
	var out []ReportRow
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if lr.N <= 0 {
			return nil, fmt.Errorf("read m-pesa statement: larger than %d bytes", MaxReportSize)
		}
		if err != nil {
			return nil, fmt.Errorf("read m-pesa statement: %w", err)
		}
		line, _ := cr.FieldPos(0)
		if cols == nil {
			cols = header(rec)
			continue
		}
		if blank(rec) {
			continue
		}
		row, err := readRow(rec, cols)
		if err != nil {
			return nil, fmt.Errorf("read m-pesa statement: line %d: %w", line, err)
		}
		row.Line = line
		out = append(out, row)
	}
	if cols == nil {
		return nil, fmt.Errorf("read m-pesa statement: no header line with the columns %s", strings.Join(reportColumns, ", "))
	}
	return out, nil
}

// header returns the columns of rec by name when rec is the table's
// header, naming every column the reader needs; nil otherwise.
func header(rec []string) map[string]int {
	cols := map[string]int{}
	for i, name := range rec {
		cols[strings.ToLower(strings.TrimSpace(strings.TrimPrefix(name, "\ufeff")))] = i
	}
	for _, name := range reportColumns {
		if _, ok := cols[strings.ToLower(name)]; !ok {
			return nil
		}
	}
	return cols
}

func blank(rec []string) bool {
	for _, f := range rec {
		if strings.TrimSpace(f) != "" {
			return false
		}
	}
	return true
}

func readRow(rec []string, cols map[string]int) (ReportRow, error) {
	field := func(name string) string {
		i, ok := cols[strings.ToLower(name)]
		if !ok || i >= len(rec) {
			return ""
		}
		return strings.TrimSpace(rec[i])
	}
	row := ReportRow{Receipt: field("Receipt No."), Status: field("Transaction Status"), ReasonType: field("Reason Type"),
		Details: field("Details"), Linked: field("Linked Transaction ID")}
	if row.Receipt == "" || strings.ContainsFunc(row.Receipt, func(r rune) bool {
		return (r < 'A' || r > 'Z') && (r < 'a' || r > 'z') && (r < '0' || r > '9')
	}) {
		return ReportRow{}, fmt.Errorf("receipt %q is not letters and digits", row.Receipt)
	}
	if row.Status == "" {
		return ReportRow{}, errors.New("no Transaction Status")
	}
	at, err := reportTime(field("Completion Time"))
	if err != nil {
		return ReportRow{}, err
	}
	row.At = at
	if row.PaidIn, err = reportAmount(field("Paid In")); err != nil {
		return ReportRow{}, fmt.Errorf("Paid In: %w", err)
	}
	if row.Withdrawn, err = reportAmount(field("Withdrawn")); err != nil {
		return ReportRow{}, fmt.Errorf("Withdrawn: %w", err)
	}
	if row.PaidIn.IsPositive() == row.Withdrawn.IsPositive() {
		return ReportRow{}, fmt.Errorf("paid in %s and withdrawn %s: want one amount", row.PaidIn, row.Withdrawn)
	}
	return row, nil
}

// reportTime reads a Completion Time: YYYY-MM-DD HH:MM:SS in Nairobi.
func reportTime(s string) (time.Time, error) {
	for _, layout := range []string{time.DateTime, "2006-01-02T15:04:05"} {
		if t, err := time.ParseInLocation(layout, s, nairobi); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("completion time %q is not YYYY-MM-DD HH:MM:SS", s)
}

// reportAmount reads an amount column: empty is zero; thousands
// separators and a sign (the portal shows withdrawals negative) are
// dropped.
func reportAmount(s string) (decimal.Decimal, error) {
	v := strings.TrimPrefix(strings.ReplaceAll(s, ",", ""), "-")
	if v == "" {
		return decimal.Zero, nil
	}
	d, err := decimal.NewFromString(v)
	if err != nil || d.IsNegative() || strings.ContainsAny(v, "eE+") {
		return decimal.Decimal{}, fmt.Errorf("%q is not an amount", s)
	}
	return d, nil
}
