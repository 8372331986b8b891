package camt

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

func mustParseFile(t *testing.T, name string) File {
	t.Helper()
	fh, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fh.Close() })
	f, err := Parse(fh)
	if err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
	return f
}

func TestParseNotification(t *testing.T) {
	t.Parallel()
	f := mustParseFile(t, "testdata/camt054_eur.xml")
	if f.Message != "camt.054" || len(f.Credits) != 1 || len(f.Skipped) != 2 {
		t.Fatalf("got %s, %d credits, skipped %+v; want camt.054, 1 credit, 2 skipped", f.Message, len(f.Credits), f.Skipped)
	}
	c := f.Credits[0]
	want := Credit{Account: "DE89370400440532013000", EntryRef: "BANK-ENTRY-0001", Currency: "EUR",
		References: []string{"LDGABCDEFGHIJKL"}, DebtorName: "Ada Payer", DebtorIBAN: "FR7630006000011234567890189", DebtorBank: "BNP Paribas",
		BookedAt: time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)}
	if !c.Amount.Equal(decimal.RequireFromString("105")) {
		t.Errorf("got amount %s, want 105", c.Amount)
	}
	c.Amount = decimal.Decimal{}
	if c.Account != want.Account || c.EntryRef != want.EntryRef || c.Currency != want.Currency ||
		!slices.Equal(c.References, want.References) || c.DebtorName != want.DebtorName ||
		c.DebtorIBAN != want.DebtorIBAN || c.DebtorBank != want.DebtorBank || !c.BookedAt.Equal(want.BookedAt) {
		t.Errorf("got %+v, want %+v", c, want)
	}
	if f.Skipped[0].Reason != "a debit" || !strings.HasPrefix(f.Skipped[1].Reason, "not booked") {
		t.Errorf("got skipped %+v, want a debit and a pending entry", f.Skipped)
	}
}

func TestParseStatementBatch(t *testing.T) {
	t.Parallel()
	f := mustParseFile(t, "testdata/camt053_batch.xml")
	if f.Message != "camt.053" || len(f.Credits) != 2 {
		t.Fatalf("got %s with %d credits, want camt.053 with 2", f.Message, len(f.Credits))
	}
	a, b := f.Credits[0], f.Credits[1]
	if a.EntryRef != "B-77/TX-A" || b.EntryRef != "B-77/2" {
		t.Errorf("got entry refs %q, %q; want B-77/TX-A, B-77/2", a.EntryRef, b.EntryRef)
	}
	if a.Account != "12345678" || a.DebtorName != "Bo Payer" || a.DebtorIBAN != "40-11-22 1234" ||
		!slices.Equal(a.References, []string{"LDGAAAAAAAAAAAA"}) || !a.Amount.Equal(decimal.NewFromInt(10)) {
		t.Errorf("got first %+v", a)
	}
	if !slices.Equal(b.References, []string{"LDGBBBBBBBBBBBB"}) || !b.Amount.Equal(decimal.NewFromInt(20)) {
		t.Errorf("got second %+v", b)
	}
	if !a.BookedAt.Equal(time.Date(2026, 11, 29, 9, 15, 0, 0, time.UTC)) {
		t.Errorf("got booked %s, want 09:15 UTC", a.BookedAt)
	}
}

func TestParseRefuses(t *testing.T) {
	t.Parallel()
	entry := func(amt string) string {
		return `<Document><BkToCstmrDbtCdtNtfctn><Ntfctn><Acct><Id><IBAN>X</IBAN></Id></Acct><Ntry>` + amt +
			`<CdtDbtInd>CRDT</CdtDbtInd><AcctSvcrRef>R</AcctSvcrRef></Ntry></Ntfctn></BkToCstmrDbtCdtNtfctn></Document>`
	}
	for name, doc := range map[string]string{
		"not camt":           `<Document><Other/></Document>`,
		"not xml":            `{"a":1}`,
		"negative amount":    entry(`<Amt Ccy="EUR">-5</Amt>`),
		"exponent":           entry(`<Amt Ccy="EUR">1e3</Amt>`),
		"no currency":        entry(`<Amt>5</Amt>`),
		"lower currency":     entry(`<Amt Ccy="eur">5</Amt>`),
		"no account":         `<Document><BkToCstmrDbtCdtNtfctn><Ntfctn><Ntry/></Ntfctn></BkToCstmrDbtCdtNtfctn></Document>`,
		"both message kinds": `<Document><BkToCstmrDbtCdtNtfctn><Ntfctn/></BkToCstmrDbtCdtNtfctn><BkToCstmrStmt><Stmt/></BkToCstmrStmt></Document>`,
	} {
		if f, err := Parse(strings.NewReader(doc)); err == nil {
			t.Errorf("%s: got %+v, want an error", name, f)
		}
	}
}
