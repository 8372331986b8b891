package camt

import (
	"os"
	"strings"
	"testing"
)

// FuzzParse: any input parses or errs without panicking, and every credit
// it accepts can be recorded once and matched: an account, an entry
// reference, a positive amount and a currency code.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"testdata/camt054_eur.xml", "testdata/camt053_batch.xml"} {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`<Document><BkToCstmrStmt><Stmt><Acct><Id><IBAN>X</IBAN></Id></Acct><Ntry><Amt Ccy="EUR">1</Amt><CdtDbtInd>CRDT</CdtDbtInd><NtryRef>r</NtryRef></Ntry></Stmt></BkToCstmrStmt></Document>`))
	f.Add([]byte(`<Document><BkToCstmrDbtCdtNtfctn><Ntfctn/></BkToCstmrDbtCdtNtfctn></Document>`))
	f.Add([]byte(`<!DOCTYPE x [<!ENTITY a "aaaa">]><Document>&a;</Document>`))
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := Parse(strings.NewReader(string(b)))
		if err != nil {
			return
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
