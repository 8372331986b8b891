package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/workers/rails/camt"
)

const testOperatorToken = "operator-token-for-tests-0123456789abcdef"

// bankPayment is a bank-transfer payment and what its payer must send.
type bankPayment struct {
	ID        string
	Reference string
	Amount    decimal.Decimal // in Currency
	Currency  string
}

// payByBank creates a payment funded by bank transfer from fromCountry.
func (p paymentSetup) payByBank(t *testing.T, fromCountry string) bankPayment {
	t.Helper()
	got := p.pay(t, p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":50000,"fromCountry":%q}`, p.btc, fromCountry))
	var d struct {
		Reference, Currency string
		Amount              int64
	}
	jsonMember(t, got, "depositBankDetails", &d)
	return bankPayment{ID: got["id"].(string), Reference: d.Reference, Amount: decimal.New(d.Amount, -2), Currency: d.Currency}
}

// credit is one camt.054 credit entry.
type credit struct {
	entryRef, amount, currency, reference, debtorIBAN, debtorBank string
}

// camtFile writes a camt.054 notification of credits and returns its path.
func camtFile(t *testing.T, credits ...credit) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.054.001.08"><BkToCstmrDbtCdtNtfctn>
<GrpHdr><MsgId>T</MsgId><CreDtTm>2026-11-29T09:00:00Z</CreDtTm></GrpHdr>
<Ntfctn><Id>N</Id><Acct><Id><IBAN>DE89370400440532013000</IBAN></Id></Acct>`)
	for _, c := range credits {
		fmt.Fprintf(&b, `<Ntry><Amt Ccy=%q>%s</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts><Cd>BOOK</Cd></Sts>
<BookgDt><Dt>2026-11-29</Dt></BookgDt><AcctSvcrRef>%s</AcctSvcrRef><NtryDtls><TxDtls>
<RltdPties><Dbtr><Pty><Nm>Ada Payer</Nm></Pty></Dbtr><DbtrAcct><Id><IBAN>%s</IBAN></Id></DbtrAcct></RltdPties>
<RltdAgts><DbtrAgt><FinInstnId><Nm>%s</Nm></FinInstnId></DbtrAgt></RltdAgts>
<RmtInf><Ustrd>%s</Ustrd></RmtInf></TxDtls></NtryDtls></Ntry>`, c.currency, c.amount, c.entryRef, c.debtorIBAN, c.debtorBank, c.reference)
	}
	b.WriteString(`</Ntfctn></BkToCstmrDbtCdtNtfctn></Document>`)
	path := filepath.Join(t.TempDir(), "camt054.xml")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// importReport is what deposits import prints.
type importReport struct {
	Message string `json:"message"`
	Credits []struct {
		Outcome       string `json:"outcome"`
		PaymentID     string `json:"paymentId"`
		PaymentStatus string `json:"paymentStatus"`
		UnmatchedID   string `json:"unmatchedFundsId"`
		Reason        string `json:"reason"`
	} `json:"credits"`
}

func (s *testServer) importCamt(t *testing.T, path string) importReport {
	t.Helper()
	var rep importReport
	mustDecode(t, s.ledgerctl(t, "deposits", "import", path), &rep)
	return rep
}

// depositEvents counts a payment's deposit events.
func (s *testServer) depositEvents(t *testing.T, paymentID string) int {
	t.Helper()
	var n int
	s.queryRow(t, `SELECT count(*) FROM events WHERE stream_id = $1 AND type IN ('payment.deposited', 'payment.deposit_received')`,
		[]any{paymentID}, &n)
	return n
}

// waitUnmatched waits for unmatched item id to reach status.
func (s *testServer) waitUnmatched(t *testing.T, id, status string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var got string
		s.queryRow(t, `SELECT status FROM unmatched_funds WHERE id = $1`, []any{id}, &got)
		if got == status {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("unmatched funds %s: got %s, want %s", id, got, status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func wantOutcome(t *testing.T, rep importReport, outcome, reason string) (paymentID, unmatchedID string) {
	t.Helper()
	if len(rep.Credits) != 1 || rep.Credits[0].Outcome != outcome || rep.Credits[0].Reason != reason {
		t.Fatalf("got %+v, want one credit %s (unmatched: %q)", rep.Credits, outcome, reason)
	}
	return rep.Credits[0].PaymentID, rep.Credits[0].UnmatchedID
}

// TestCamtDeposits: camt.054 credits fund bank-transfer payments by their
// exact reference, each bank entry once whatever is re-sent; money that
// cannot be matched goes to the unmatched-funds queue, from which
// operators assign or return it; the tenant's trial balance keeps
// balancing with the suspense account.
func TestCamtDeposits(t *testing.T) {
	t.Parallel()
	p := newPaymentSetup(t, map[string]string{"LEDGER_OPERATOR_TOKEN": testOperatorToken})
	s := p.s

	full := p.payByBank(t, "Europe")
	if full.Currency != "EUR" || !strings.HasPrefix(full.Reference, "LDG") {
		t.Fatalf("got %+v, want a EUR payment with an LDG reference", full)
	}
	file := camtFile(t, credit{"E-FULL", full.Amount.StringFixed(2), "EUR", full.Reference, "FR7630006000011234567890189", ""})
	if id, _ := wantOutcome(t, s.importCamt(t, file), "deposited", ""); id != full.ID {
		t.Fatalf("deposited to %s, want %s", id, full.ID)
	}
	// An onramp to a Lightning address: funded by the credit, converted and paid out.
	got := p.waitFor(t, full.ID, 15*time.Second, statusIs("success"))
	if d, err := decimal.NewFromString(fmt.Sprint(got["amountDeposited"])); err != nil || !d.Equal(full.Amount) {
		t.Errorf("amountDeposited: got %v, want %s", got["amountDeposited"], full.Amount)
	}
	if st := statuses(got); !slices.Equal(st, []string{"created", "deposited", "transferring", "success"}) {
		t.Errorf("statusLogs: got %v, want created, deposited, transferring, success", st)
	}

	t.Run("the same file again records nothing", func(t *testing.T) {
		wantOutcome(t, s.importCamt(t, file), "duplicate", "")
		body, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		r := s.call(t, http.MethodPost, camt.ImportPath, testOperatorToken, string(body))
		var rep importReport
		mustDecode(t, r.Body, &rep)
		if r.Status != http.StatusOK || len(rep.Credits) != 1 || rep.Credits[0].Outcome != "duplicate" {
			t.Errorf("POST %s: got %d %s, want 200 and a duplicate", camt.ImportPath, r.Status, r.Body)
		}
		if n := s.depositEvents(t, full.ID); n != 1 {
			t.Errorf("deposit events: got %d, want 1", n)
		}
		if r := s.call(t, http.MethodPost, camt.ImportPath, p.tok, string(body)); r.Status != http.StatusUnauthorized {
			t.Errorf("POST with a tenant token: got %d, want 401", r.Status)
		}
		if r := s.call(t, http.MethodPost, camt.ImportPath, testOperatorToken, "<Document/>"); r.Status != http.StatusBadRequest {
			t.Errorf("POST of a file that is no camt: got %d %s, want 400", r.Status, r.Body)
		}
	})

	t.Run("the same entry posted concurrently funds once", func(t *testing.T) {
		race := p.payByBank(t, "Europe")
		body, err := os.ReadFile(camtFile(t, credit{"E-RACE", race.Amount.StringFixed(2), "EUR", race.Reference, "", ""}))
		if err != nil {
			t.Fatal(err)
		}
		outcomes := make(chan string, 4)
		for range 4 {
			go func() {
				req, err := s.callRequest(http.MethodPost, camt.ImportPath, testOperatorToken, string(body))
				if err != nil {
					outcomes <- err.Error()
					return
				}
				r, err := trySend(req)
				var rep importReport
				if err != nil || r.Status != http.StatusOK || json.Unmarshal(r.Body, &rep) != nil || len(rep.Credits) != 1 {
					outcomes <- fmt.Sprintf("error %v %d %s", err, r.Status, r.Body)
					return
				}
				outcomes <- rep.Credits[0].Outcome
			}()
		}
		count := map[string]int{}
		for range 4 {
			count[<-outcomes]++
		}
		if count["deposited"] != 1 || count["duplicate"] != 3 {
			t.Errorf("outcomes: got %v, want 1 deposited and 3 duplicates", count)
		}
		if n := s.depositEvents(t, race.ID); n != 1 {
			t.Errorf("deposit events: got %d, want 1", n)
		}
	})

	offByOne := p.payByBank(t, "Europe")
	last := byte('A')
	if offByOne.Reference[len(offByOne.Reference)-1] == last {
		last = 'B'
	}
	wrongRef := offByOne.Reference[:len(offByOne.Reference)-1] + string(last)
	_, strayID := wantOutcome(t, s.importCamt(t, camtFile(t, credit{"E-STRAY", offByOne.Amount.StringFixed(2), "EUR", wrongRef, "", ""})),
		"unmatched", "no_match")
	if n := s.depositEvents(t, offByOne.ID); n != 0 {
		t.Errorf("a reference off by one character funded the payment: %d deposit events", n)
	}

	t.Run("partial credits accumulate", func(t *testing.T) {
		part := p.payByBank(t, "Europe")
		first := part.Amount.Mul(decimal.RequireFromString("0.4")).Round(2)
		if _, id := wantOutcome(t, s.importCamt(t, camtFile(t, credit{"E-PART-1", first.StringFixed(2), "EUR", part.Reference, "", ""})), "deposited", ""); id != "" {
			t.Errorf("a partial credit opened unmatched funds %s", id)
		}
		if got := mustStatus(t, s.call(t, http.MethodGet, "/payments/"+part.ID, p.tok, ""), http.StatusOK); got["status"] != "created" {
			t.Errorf("after a partial credit: got %v, want created", got["status"])
		}
		rest := part.Amount.Sub(first)
		wantOutcome(t, s.importCamt(t, camtFile(t, credit{"E-PART-2", rest.StringFixed(2), "EUR", part.Reference, "", ""})), "deposited", "")
		p.waitFor(t, part.ID, 15*time.Second, func(m map[string]any) bool { return m["status"] != "created" })
		if n := s.depositEvents(t, part.ID); n != 2 {
			t.Errorf("deposit events: got %d, want 2", n)
		}
	})

	over := p.payByBank(t, "Europe")
	_, excessID := wantOutcome(t, s.importCamt(t, camtFile(t, credit{"E-OVER", over.Amount.Add(decimal.NewFromInt(5)).StringFixed(2), "EUR",
		over.Reference, "FR7630006000011234567890189", ""})), "deposited", "overpaid")
	p.waitFor(t, over.ID, 15*time.Second, func(m map[string]any) bool { return m["status"] != "created" })

	gbp := p.payByBank(t, "Europe")
	_, wrongCurID := wantOutcome(t, s.importCamt(t, camtFile(t, credit{"E-GBP", "12.00", "GBP", gbp.Reference, "", ""})), "unmatched", "wrong_currency")

	var queue []struct {
		ID, Status, Reason, Currency string
		Amount                       decimal.Decimal
	}
	mustDecode(t, s.ledgerctl(t, "unmatched", "list", "--json"), &queue)
	open := map[string]string{}
	for _, u := range queue {
		open[u.ID] = u.Reason + " " + u.Currency + " " + u.Amount.StringFixed(2)
	}
	for id, want := range map[string]string{strayID: "no_match EUR " + offByOne.Amount.StringFixed(2), excessID: "overpaid EUR 5.00",
		wrongCurID: "wrong_currency GBP 12.00"} {
		if open[id] != want {
			t.Errorf("queue item %s: got %q, want %q", id, open[id], want)
		}
	}

	t.Run("assign and return", func(t *testing.T) {
		var res struct{ PaymentStatus string }
		mustDecode(t, s.ledgerctl(t, "unmatched", "assign", strayID, "--payment", offByOne.ID, "--by", "ann"), &res)
		if res.PaymentStatus != "deposited" {
			t.Errorf("assigned: payment status %q, want deposited", res.PaymentStatus)
		}
		p.waitFor(t, offByOne.ID, 15*time.Second, func(m map[string]any) bool { return m["status"] != "created" })
		var actor, by string
		s.queryRow(t, `SELECT metadata->>'actor', data->>'by' FROM events WHERE stream_id = $1 AND type = 'unmatched_funds.assigned'`,
			[]any{strayID}, &actor, &by)
		if actor != "operator:ann" || by != "operator:ann" {
			t.Errorf("assignment actor: got %q, %q; want operator:ann", actor, by)
		}
		var ret struct{ Status, DebtorAccount string }
		mustDecode(t, s.ledgerctl(t, "unmatched", "return", excessID, "--by", "bo"), &ret)
		if ret.Status != "returning" || ret.DebtorAccount != "FR7630006000011234567890189" {
			t.Errorf("returned: got %+v, want returning to the payer's IBAN", ret)
		}
		var open []struct{ ID string }
		mustDecode(t, s.ledgerctl(t, "unmatched", "list", "--json"), &open)
		if len(open) != 1 || open[0].ID != wrongCurID {
			t.Errorf("open queue: got %+v, want only %s", open, wrongCurID)
		}
		// The sandbox rail pays the return back to the payer's IBAN, once.
		s.waitUnmatched(t, excessID, "returned")
		var returns int
		var key string
		s.queryRow(t, `SELECT count(*) OVER (), idempotency_key FROM sandbox_payouts WHERE payment_id = $1 AND refund`,
			[]any{excessID}, &returns, &key)
		if returns != 1 || key != "return-"+excessID {
			t.Errorf("sandbox returns: got %d keyed %s, want one keyed return-<id>", returns, key)
		}
	})

	t.Run("the trial balance balances with the suspense account", func(t *testing.T) {
		var tb struct {
			Items []struct {
				Account, Currency string
				Balance           json.Number
			}
			Totals []struct {
				Currency string
				Balanced bool
			}
		}
		r := s.call(t, http.MethodGet, "/ledger/balances", p.tok, "")
		d := json.NewDecoder(bytes.NewReader(r.Body))
		d.UseNumber()
		if err := d.Decode(&tb); err != nil {
			t.Fatal(err)
		}
		for _, tot := range tb.Totals {
			if !tot.Balanced {
				t.Errorf("%s does not balance: %s", tot.Currency, r.Body)
			}
		}
		suspense := map[string]string{}
		for _, it := range tb.Items {
			if it.Account == "suspense:unmatched_funds" {
				suspense[it.Currency] = string(it.Balance)
			}
		}
		// The tenant's books hold the excess (returned: 0) and the GBP
		// credit (open); the stray credit was the operator's.
		if !decimal.RequireFromString(suspense["GBP"]).Equal(decimal.NewFromInt(-12)) || !decimal.RequireFromString(suspense["EUR"]).IsZero() {
			t.Errorf("suspense balances: got %v, want GBP -12 and EUR 0", suspense)
		}
	})

	// The read models the credits wrote (deposit references, bank entries,
	// unmatched funds, postings) are what a replay of the events writes.
	s.ledgerctl(t, "audit", "verify")
}

// TestCamtCreditAfterExpiry: a credit for a payment whose validity ended
// is held as unmatched funds, not deposited.
func TestCamtCreditAfterExpiry(t *testing.T) {
	t.Parallel()
	p := newPaymentSetup(t, map[string]string{"LEDGER_VALIDITY": "bank=1s", "LEDGER_EXPIRY_POLL": "200ms"})
	late := p.payByBank(t, "UK")
	p.waitFor(t, late.ID, 15*time.Second, statusIs("expired"))
	_, id := wantOutcome(t, p.s.importCamt(t, camtFile(t, credit{"G-LATE", late.Amount.StringFixed(2), "GBP", late.Reference, "GB33BUKB20201555555555", ""})),
		"unmatched", "expired")
	if n := p.s.depositEvents(t, late.ID); n != 0 {
		t.Errorf("deposit events: got %d, want 0", n)
	}
	var paymentID string
	p.s.queryRow(t, `SELECT state->>'paymentId' FROM unmatched_funds WHERE id = $1`, []any{id}, &paymentID)
	if paymentID != late.ID {
		t.Errorf("unmatched funds name payment %q, want %s", paymentID, late.ID)
	}
}

// TestOperatorTokenConfiguration: ledgerd refuses an operator token given
// twice or too short, and reads it from a file, trimmed.
func TestOperatorTokenConfiguration(t *testing.T) {
	t.Parallel()
	file, short := settingFile(t, "operator.token", []byte(testOperatorToken+"\n")), settingFile(t, "short.token", []byte("0123456789\n"))
	for name, env := range map[string]map[string]string{
		"twice":     {"LEDGER_OPERATOR_TOKEN": testOperatorToken, "LEDGER_OPERATOR_TOKEN_FILE": file},
		"too short": {"LEDGER_OPERATOR_TOKEN": "0123456789"},
	} {
		if _, err := loadEnv(env); err == nil || !strings.Contains(err.Error(), "LEDGER_OPERATOR_TOKEN") {
			t.Errorf("%s: got %v, want a LEDGER_OPERATOR_TOKEN error", name, err)
		}
	}
	cfg, err := loadEnv(map[string]string{"LEDGER_OPERATOR_TOKEN_FILE": file})
	if err != nil {
		t.Fatal(err)
	}
	if token, err := cfg.operatorToken(); err != nil || token != testOperatorToken {
		t.Errorf("got %q, %v; want the file's token", token, err)
	}
	cfg, err = loadEnv(map[string]string{"LEDGER_OPERATOR_TOKEN_FILE": short})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cfg.operatorToken(); err == nil {
		t.Error("a short token in the file: got no error")
	}
}

// TestCamtStatementsConfiguration: the camt.053 statements directory is
// production's, and must be a directory.
func TestCamtStatementsConfiguration(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	load := func(env map[string]string) (config, error) {
		env["LEDGER_MASTER_KEY_FILE"] = masterKey
		return loadEnv(env)
	}
	for name, env := range map[string]map[string]string{
		"in sandbox":      {"LEDGER_CAMT053_DIR": dir},
		"not a directory": {"LEDGER_MODE": "production", "LEDGER_CAMT053_DIR": filepath.Join(dir, "missing")},
	} {
		if _, err := load(env); err == nil || !strings.Contains(err.Error(), "LEDGER_CAMT053_DIR") {
			t.Errorf("%s: got %v, want a LEDGER_CAMT053_DIR error", name, err)
		}
	}
	if cfg, err := load(map[string]string{"LEDGER_MODE": "production", "LEDGER_CAMT053_DIR": dir}); err != nil || cfg.CamtStatementsDir != dir {
		t.Fatalf("got %q, %v; want the directory", cfg.CamtStatementsDir, err)
	}
}
