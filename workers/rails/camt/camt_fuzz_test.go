package camt

import (
	"os"
	"strings"
	"testing"
)

// FuzzParse: any input parses or errs without panicking, and every credit
// it accepts can be recorded once and matched: an account, an entry
// reference, a positive amount and a currency code. So can every other
// entry a statement lists, and every balance names its account, type,
// currency and date or time.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"testdata/camt054_eur.xml", "testdata/camt053_batch.xml",
		"testdata/statements/camt053_20261127.xml", "testdata/statements/camt053_20261128.xml"} {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`<Document><BkToCstmrStmt><Stmt><Acct><Id><IBAN>X</IBAN></Id></Acct><Ntry><Amt Ccy="EUR">1</Amt><CdtDbtInd>CRDT</CdtDbtInd><NtryRef>r</NtryRef></Ntry></Stmt></BkToCstmrStmt></Document>`))
	f.Add([]byte(`<Document><BkToCstmrDbtCdtNtfctn><Ntfctn/></BkToCstmrDbtCdtNtfctn></Document>`))
	f.Add([]byte(`<Document><BkToCstmrStmt><Stmt><Acct><Id><IBAN>X</IBAN></Id></Acct><Bal><Tp><CdOrPrtry><Cd>CLBD</Cd></CdOrPrtry></Tp><Amt Ccy="EUR">0</Amt><CdtDbtInd>DBIT</CdtDbtInd><Dt><DtTm>2026-11-28T23:59:59Z</DtTm></Dt></Bal></Stmt></BkToCstmrStmt></Document>`))
	f.Add([]byte(`<!DOCTYPE x [<!ENTITY a "aaaa">]><Document>&a;</Document>`))
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := Parse(strings.NewReader(string(b)))
		if err != nil {
			return
		}
		for _, e := range file.Entries {
			if e.Account == "" || e.EntryRef == "" || !e.Amount.IsPositive() || len(e.Currency) != 3 || !e.Debit && !e.Reversal {
				t.Fatalf("accepted entry %+v from %q", e, b)
			}
		}
		for _, bal := range file.Balances {
			if bal.Account == "" || bal.Type == "" || len(bal.Currency) != 3 || (bal.Date == "") == bal.At.IsZero() {
				t.Fatalf("accepted balance %+v from %q", bal, b)
			}
		}
		for _, c := range file.Credits {
			if c.Account == "" || c.EntryRef == "" || !c.Amount.IsPositive() || len(c.Currency) != 3 {
				t.Fatalf("accepted %+v from %q", c, b)
			}
			for _, r := range c.References {
				if r == "" || strings.TrimSpace(r) != r {
					t.Fatalf("reference %q from %q", r, b)
				}
			}
		}
	})
}
