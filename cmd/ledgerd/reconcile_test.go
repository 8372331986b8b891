package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/workers/rails/ethereum/gethtest"
	"github.com/ledger/ledger/workers/rails/lightning/lndtest"
	"github.com/ledger/ledger/workers/rails/mpesa/mpesatest"
	"github.com/ledger/ledger/workers/rails/payout"
	"github.com/ledger/ledger/workers/rails/paystack"
	"github.com/ledger/ledger/workers/rails/paystack/paystacktest"
	"github.com/ledger/ledger/workers/rails/statement"
	"github.com/ledger/ledger/workers/reconcile"
)

// reconcileReport is what ledgerctl reconcile prints.
type reconcileReport struct {
	Rail         string          `json:"rail"`
	Matched      int             `json:"matched"`
	BreaksByKind map[string]int  `json:"breaksByKind"`
	NewBreaks    int             `json:"newBreaks"`
	Breaks       []reportedBreak `json:"breaks"`
	Balances     []struct {
		Account, Currency                                              string
		ProviderOpening, LedgerOpening, ProviderClosing, LedgerClosing decimal.Decimal
		Agrees                                                         bool
	} `json:"balances"`
	ProviderNearbyUnread string `json:"providerNearbyUnread"`
}

// reportedBreak is one break of a reconcileReport.
type reportedBreak struct {
	ID, Kind, Ref, Status string
	New                   bool
}

// reconcile runs ledgerctl reconcile of rail over [from, to) as the
// operator ann, and returns its report.
func (s *testServer) reconcile(t *testing.T, rail string, from, to time.Time) reconcileReport {
	t.Helper()
	var rep reconcileReport
	mustDecode(t, s.ledgerctl(t, "reconcile", "--rail", rail, "--from", from.Format(time.RFC3339), "--to", to.Format(time.RFC3339),
		"--by", "ann"), &rep)
	return rep
}

// reconcileRefused fails t unless ledgerctl reconcile refuses rail, which
// has no statement source.
func (s *testServer) reconcileRefused(t *testing.T, rail string, from, to time.Time) {
	t.Helper()
	_, stderr, err := s.tryLedgerctl(t, "reconcile", "--rail", rail, "--from", from.Format(time.RFC3339), "--to", to.Format(time.RFC3339),
		"--by", "ann")
	if err == nil || !strings.Contains(string(stderr), "no statement source") {
		t.Errorf("reconcile %s, which has no source: got %v, %s; want refused", rail, err, stderr)
	}
}

// found lists a report's breaks as "kind ref status new".
func (r reconcileReport) found() []string {
	var out []string
	for _, b := range r.Breaks {
		out = append(out, fmt.Sprintf("%s %s %s %t", b.Kind, b.Ref, b.Status, b.New))
	}
	slices.Sort(out)
	return out
}

// TestReconcileSandbox reconciles the sandbox rail's books with the
// ledger through ledgerctl: a clean day has no break; a payout made by
// hand at the provider, a deposit the provider has no record of, a payout
// a cent off and one the provider says failed are one break each, found
// again (not recorded again) by a second run; a break an operator resolved
// is recorded with the operator and stays resolved when the window is run
// again; the metrics count the open ones.
func TestReconcileSandbox(t *testing.T) {
	t.Parallel()
	p := newPaymentSetup(t, nil)
	from := time.Now().UTC().Add(-time.Minute).Truncate(time.Second)
	failing := mustStatus(t, p.s.call(t, http.MethodPost, "/merchants", p.tok,
		`{"name":"Bounce","country":"SouthAfrica","bankName":"Nedbank","accountNumber":"4000000000"}`), http.StatusCreated)["id"].(string)
	var paid []string
	for i, merchant := range []string{p.za, p.za, p.za, p.btc, failing} {
		body := fmt.Sprintf(`{"merchantId":%q,"amount":%d,"reference":"r%d"}`, merchant, 1500+i, i)
		if merchant == p.btc { // paid by bank transfer, paid out by Lightning
			body = fmt.Sprintf(`{"merchantId":%q,"amount":50000,"fromCountry":"UK"}`, merchant)
		}
		id := p.pay(t, p.tok, body)["id"].(string)
		mustStatus(t, p.s.call(t, http.MethodPost, "/sandbox/payments/"+id+"/deposit", p.tok, ""), http.StatusAccepted)
		want := "success"
		if merchant == failing {
			want = "failed"
		}
		p.waitFor(t, id, 20*time.Second, statusIs(want))
		paid = append(paid, id)
	}
	to := time.Now().UTC().Add(time.Minute).Truncate(time.Second)
	run := func(rail string) reconcileReport { t.Helper(); return p.s.reconcile(t, rail, from, to) }

	if rep := run("LIGHTNING"); rep.Matched != 5 || len(rep.Breaks) != 0 {
		// Four sandbox deposits in sats, and the Lightning merchant's payout.
		t.Fatalf("a clean day on LIGHTNING: got %d matched, breaks %v; want 5 and none", rep.Matched, rep.found())
	}
	if rep := run("BANK_TRANSFER"); rep.Matched != 1 || len(rep.Breaks) != 0 {
		t.Fatalf("a clean day on BANK_TRANSFER: got %d matched, breaks %v; want 1 and none", rep.Matched, rep.found())
	}
	if rep := run("BANK"); rep.Matched != 4 || len(rep.Breaks) != 0 || rep.BreaksByKind["provider_only"] != 0 {
		t.Fatalf("a clean day on BANK: got %d matched, breaks %v; want 4 and none", rep.Matched, rep.found())
	}

	byHand, deleted, centOff, failedThere := "by-hand-"+paid[0][:8], "", paid[1], paid[2]
	p.s.queryRow(t, `INSERT INTO sandbox_payouts (id, payment_id, idempotency_key, rail, amount, currency, destination, status, reason, created_at)
		VALUES (gen_random_uuid(), gen_random_uuid(), $1, 'BANK', 250, 'ZAR', '1234567890', 'completed', '', $2) RETURNING ''`,
		[]any{byHand, from.Add(time.Second)}, new(string))
	p.s.queryRow(t, `DELETE FROM sandbox_deposits WHERE payment_id = $1 RETURNING id::text`, []any{paid[0]}, &deleted)
	p.s.queryRow(t, `UPDATE sandbox_payouts SET amount = amount + 0.01 WHERE payment_id = $1 RETURNING ''`, []any{centOff}, new(string))
	p.s.queryRow(t, `UPDATE sandbox_payouts SET status = 'failed' WHERE payment_id = $1 RETURNING ''`, []any{failedThere}, new(string))

	bank, lightning := run("BANK"), run("LIGHTNING")
	wantBank := []string{"amount_differs " + centOff + " open true", "provider_only " + byHand + " open true",
		"status_differs " + failedThere + " open true"}
	if got := bank.found(); !slices.Equal(got, wantBank) || bank.NewBreaks != 3 || bank.Matched != 2 {
		t.Errorf("BANK after the changes: got %d matched, %d new, %v; want 2, 3, %v", bank.Matched, bank.NewBreaks, got, wantBank)
	}
	wantLightning := []string{"ledger_only " + deleted + " open true"}
	if got := lightning.found(); !slices.Equal(got, wantLightning) || lightning.Matched != 4 {
		t.Errorf("LIGHTNING after the deletion: got %d matched, %v; want 4, %v", lightning.Matched, got, wantLightning)
	}
	var finder string
	p.s.queryRow(t, `SELECT metadata->>'actor' FROM events WHERE type = 'reconciliation.break_found' LIMIT 1`, nil, &finder)
	if finder != "operator:ann" {
		t.Errorf("break_found actor: got %q, want the operator who ran ledgerctl reconcile", finder)
	}
	events := p.s.countEvents(t)
	p.s.reconcileRefused(t, "CARRIER_PIGEON", from, to)
	again := run("BANK")
	if again.NewBreaks != 0 || len(again.Breaks) != 3 || p.s.countEvents(t) != events {
		t.Errorf("the same window again: got %d new of %v, %d events after %d; want none new, the same three, no event",
			again.NewBreaks, again.found(), p.s.countEvents(t), events)
	}

	var resolved struct{ ID, Status, Reason, ResolvedBy string }
	byHandID := bank.Breaks[slices.IndexFunc(bank.Breaks, func(b reportedBreak) bool { return b.Ref == byHand })].ID
	if _, stderr, err := p.s.tryLedgerctl(t, "reconcile", "resolve", byHandID, "--reason", " ", "--by", "ann"); err == nil ||
		!strings.Contains(string(stderr), "reason") || p.s.countEvents(t) != events {
		t.Errorf("resolve without a reason: got %v, %s; want refused, nothing recorded", err, stderr)
	}
	mustDecode(t, p.s.ledgerctl(t, "reconcile", "resolve", byHandID, "--reason", "paid by hand at the bank; booked on ticket 42",
		"--by", "ann"), &resolved)
	if resolved.Status != "resolved" || resolved.ResolvedBy != "operator:ann" || !strings.Contains(resolved.Reason, "ticket 42") {
		t.Errorf("resolve: got %+v, want resolved by operator:ann with the reason", resolved)
	}
	var actor string
	p.s.queryRow(t, `SELECT metadata->>'actor' FROM events WHERE type = 'reconciliation.break_resolved' AND stream_id = $1`,
		[]any{byHandID}, &actor)
	if actor != "operator:ann" {
		t.Errorf("break_resolved actor: got %q, want operator:ann", actor)
	}
	if _, _, err := p.s.tryLedgerctl(t, "reconcile", "resolve", byHandID, "--reason", "again", "--by", "bo"); err == nil {
		t.Error("resolving a resolved break: got no error")
	}
	rerun := run("BANK")
	if got := rerun.found(); !slices.Contains(got, "provider_only "+byHand+" resolved false") || rerun.NewBreaks != 0 {
		t.Errorf("after the resolution: got %v, want the break found again, still resolved, none new", got)
	}
	var open []struct{ ID, Kind, Rail, Status string }
	mustDecode(t, p.s.ledgerctl(t, "reconcile", "breaks", "--open"), &open)
	if len(open) != 3 || slices.ContainsFunc(open, func(b struct{ ID, Kind, Rail, Status string }) bool { return b.ID == byHandID }) {
		t.Errorf("open breaks: got %v, want the three unresolved", open)
	}
	// The operator's dashboard users, who work the breaks there, are the
	// operator's books' own.
	var ops struct{ SetPasswordURL string }
	mustDecode(t, p.s.ledgerctl(t, "dashboard-user", "add", "--tenant", domain.OperatorBooks.String(), "--email", "ops@operator.example"), &ops)
	if ops.SetPasswordURL == "" {
		t.Error("dashboard-user add for the operator's books: no set-password link")
	}
	p.s.ledgerctl(t, "audit", "verify") // the breaks' read model is their fold
	metrics := string(p.s.get(t, "/metrics").Body)
	for _, want := range []string{`ledger_reconciliation_open_breaks{rail="BANK"} 2`, `ledger_reconciliation_open_breaks{rail="LIGHTNING"} 1`,
		`ledger_reconciliation_oldest_open_break_seconds{rail="BANK"}`, `ledger_reconciliation_breaks_scrape_error 0`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics: no %s", want)
		}
	}
}

// TestReconcileScheduleRunsOnce: two ledgerd instances' schedules due at
// the same moment on one database run each rail's window once between
// them, and run it again neither later nor in another process.
func TestReconcileScheduleRunsOnce(t *testing.T) {
	t.Parallel()
	s := startServer(t, map[string]string{"LEDGER_RECONCILE_AT": "00:00"})
	other := startServer(t, map[string]string{"LEDGER_RECONCILE_AT": "00:00", "DATABASE_URL": s.DatabaseURL,
		"LEDGER_NATS_STREAM": s.Stream.Name, "LEDGER_NATS_SUBJECT_PREFIX": s.Stream.SubjectPrefix})
	if s.app.reconcile == nil || other.app.reconcile == nil {
		t.Fatal("LEDGER_RECONCILE_AT is set and no schedule was made")
	}
	// Tomorrow, half past midnight: today is due. (Each server's own
	// schedule runs yesterday's window at start, with the real clock.)
	due := time.Now().UTC().Truncate(24 * time.Hour).Add(24*time.Hour + 30*time.Minute)
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		reports []domain.ReconciliationReport
	)
	for _, sched := range []*reconcile.Schedule{s.app.reconcile, other.app.reconcile, s.app.reconcile} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := sched.Due(context.Background(), due)
			if err != nil {
				t.Errorf("due: %v", err)
			}
			mu.Lock()
			reports = append(reports, got...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	var rails []string
	for _, r := range reports {
		rails = append(rails, r.Rail)
	}
	slices.Sort(rails)
	if want := s.app.reconcile.Rails; !slices.Equal(rails, want) {
		t.Errorf("runs: got %v, want each of %v once", rails, want)
	}
	var runs, finished int
	s.queryRow(t, `SELECT count(*), count(finished_at) FROM reconciliation_runs WHERE window_from = $1`,
		[]any{due.Truncate(24 * time.Hour).Add(-24 * time.Hour)}, &runs, &finished)
	if runs != len(s.app.reconcile.Rails) || finished != runs {
		t.Errorf("runs recorded: got %d (%d finished), want %d finished", runs, finished, len(s.app.reconcile.Rails))
	}
	if later, err := other.app.reconcile.Due(context.Background(), due.Add(time.Hour)); err != nil || len(later) != 0 {
		t.Errorf("an hour later: got %d runs, %v; want none", len(later), err)
	}
	late := *other.app.reconcile
	late.At = 2 * time.Hour
	if early, err := late.Due(context.Background(), due.Add(24*time.Hour)); err != nil || len(early) != 0 {
		t.Errorf("before the time of day: got %d runs, %v; want none", len(early), err)
	}
}

// statedBalances is the sandbox's books with a statement of balances, as
// a camt.053 source would state them.
type statedBalances struct {
	statement.Source
	balances []statement.Balance
}

func (s statedBalances) Balances(context.Context, time.Time, time.Time) ([]statement.Balance, error) {
	return s.balances, nil
}

// TestReconcileBalances: a source's opening and closing balances are
// compared with the ledger's account of money at the rail at the same
// times: the same figures are no break, a closing balance one sat off is
// one balance_differs break, with both sides, recorded once.
func TestReconcileBalances(t *testing.T) {
	t.Parallel()
	p := newPaymentSetup(t, nil)
	from := time.Now().UTC().Add(-time.Minute)
	for i := range 2 {
		id := p.pay(t, p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":%d,"reference":"b%d"}`, p.za, 900+i, i))["id"].(string)
		mustStatus(t, p.s.call(t, http.MethodPost, "/sandbox/payments/"+id+"/deposit", p.tok, ""), http.StatusAccepted)
		p.waitFor(t, id, 20*time.Second, statusIs("success"))
	}
	to := time.Now().UTC().Add(time.Minute)
	var deposited decimal.Decimal
	p.s.queryRow(t, `SELECT sum(amount) FROM sandbox_deposits WHERE currency = 'sats'`, nil, &deposited)
	r := *p.s.app.requests.Reconciler
	run := func(closing decimal.Decimal) domain.ReconciliationReport {
		t.Helper()
		r.Sources = map[string]statement.Source{"LIGHTNING": statedBalances{Source: payout.NewSandbox(p.s.app.pool, 0),
			balances: []statement.Balance{{Rail: "LIGHTNING", Account: "node-1", Currency: "sats", Opening: decimal.Zero, Closing: closing,
				From: from, To: to}}}}
		rep, err := r.Run(context.Background(), "LIGHTNING", from, to, domain.Metadata{Actor: "operator:test"})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	// Lightning funded both payments; they were paid out by bank.
	if rep := run(deposited); len(rep.Breaks) != 0 || len(rep.Balances) != 1 || !rep.Balances[0].Agrees ||
		!rep.Balances[0].LedgerClosing.Equal(deposited) || !rep.Balances[0].LedgerOpening.IsZero() {
		t.Fatalf("the ledger's own balances: got %+v, breaks %v; want them agreeing at 0 and %s", rep.Balances, rep.Breaks, deposited)
	}
	off := deposited.Add(decimal.NewFromInt(1))
	rep := run(off)
	if len(rep.Breaks) != 1 || rep.Breaks[0].Kind != domain.BreakBalanceDiffers || !rep.Breaks[0].New || rep.Balances[0].Agrees {
		t.Fatalf("a closing balance a sat off: got %+v, breaks %+v; want one new balance_differs", rep.Balances, rep.Breaks)
	}
	var provider, ledger string
	p.s.queryRow(t, `SELECT state->'provider'->>'closing', state->'ledger'->>'closing' FROM reconciliation_breaks WHERE id = $1`,
		[]any{rep.Breaks[0].ID}, &provider, &ledger)
	if provider != off.String() || ledger != deposited.String() {
		t.Errorf("the break's sides: got provider %s, ledger %s; want %s and %s", provider, ledger, off, deposited)
	}
	if again := run(off); again.NewBreaks != 0 || len(again.Breaks) != 1 {
		t.Errorf("the same window again: got %+v, want the break found, not recorded", again.Breaks)
	}
}

// TestReconcileProductionPaystackAndLND reconciles production's providers
// through ledgerctl: the LND node's settled deposit invoice pairs with the
// ledger's deposit by its payment hash; Paystack's transfers pair with the
// payouts by reference, and a transfer made by hand on Paystack's
// dashboard, and one reversed after success without the ledger hearing of
// it, are breaks.
func TestReconcileProductionPaystackAndLND(t *testing.T) {
	t.Parallel()
	node := lndtest.NewNode(t)
	fake := paystacktest.NewServer(t, paystackTestKey)
	fake.SettleWith("success")
	env := productionLightning(t, node)
	env["LEDGER_PAYSTACK_SECRET_KEY"], env["LEDGER_PAYSTACK_BASE_URL"] = paystackTestKey, fake.URL()
	p := newPaymentSetup(t, env)
	fake.SetWebhookURL(p.s.URL + paystack.WebhookPath)
	from := time.Now().UTC().Add(-time.Minute).Truncate(time.Second)
	var paid []string
	for i := range 2 {
		got := p.pay(t, p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":%d,"reference":"r%d"}`, p.za, 500+i, i))
		var inv struct{ PaymentHash string }
		mustDecode(t, []byte(got["lightningInvoice"].(string)), &inv)
		node.Settle(inv.PaymentHash, time.Now())
		p.waitFor(t, got["id"].(string), 20*time.Second, statusIs("success"))
		paid = append(paid, got["id"].(string))
	}
	byHand := fake.MakeByHand(paystacktest.Transfer{Amount: 777700, Currency: "ZAR", Reason: "supplier"})
	fake.SetDelivery(paystacktest.Never)
	fake.Settle(paid[1], "reversed")
	to := time.Now().UTC().Add(time.Minute).Truncate(time.Second)

	run := func(rail string) reconcileReport { t.Helper(); return p.s.reconcile(t, rail, from, to) }
	if rep := run("LIGHTNING"); rep.Matched != 2 || len(rep.Breaks) != 0 {
		t.Errorf("LIGHTNING: got %d matched, breaks %v; want the two deposits matched", rep.Matched, rep.found())
	}
	bank := run("BANK")
	want := []string{"provider_only " + byHand.Reference + " open true", "status_differs " + paid[1] + " open true"}
	if got := bank.found(); bank.Matched != 1 || !slices.Equal(got, want) {
		t.Errorf("BANK: got %d matched, %v; want 1, %v", bank.Matched, got, want)
	}
	p.s.reconcileRefused(t, "USDT", from, to) // not configured
}

// TestReconcileProductionCamt reconciles a day of the bank's camt.053
// statements with a ledger that recorded nothing of it: the credit is a
// break, and the day's opening and closing balances, which are not the
// ledger's, one more; the statements of the days around it that are not
// there are reported, not a failure.
func TestReconcileProductionCamt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, name := range []string{"camt053_20261127.xml", "camt053_20261128.xml"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "workers", "rails", "camt", "testdata", "statements", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	env := productionLightning(t, lndtest.NewNode(t))
	env["LEDGER_CAMT053_DIR"] = dir
	s := startServer(t, env)
	rep := s.reconcile(t, "BANK_TRANSFER", time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC))
	got := rep.found()
	if len(got) != 2 || got[0] != "balance_differs balance:DE89370400440532013000:EUR:2026-11-27T00:00:00Z/2026-11-28T00:00:00Z open true" ||
		got[1] != "provider_only E-1127-1 open true" {
		t.Errorf("breaks: got %v, want the balances and the credit", got)
	}
	if len(rep.Balances) != 1 || !rep.Balances[0].ProviderOpening.Equal(decimal.NewFromInt(1000)) ||
		!rep.Balances[0].ProviderClosing.Equal(decimal.NewFromInt(1250)) || !rep.Balances[0].LedgerClosing.IsZero() || rep.Balances[0].Agrees {
		t.Errorf("balances: got %+v, want the statement's 1000 and 1250 EUR against the ledger's nothing", rep.Balances)
	}
	if rep.ProviderNearbyUnread == "" {
		t.Error("the week before, which no statement covers, is not reported unread")
	}
}

// TestReconcileProductionMPesa reconciles a day of M-Pesa with the org
// portal's statements of the paybill and the B2C shortcode: the prompt's
// payment pairs with the deposit by its receipt, the B2C payout with the
// ledger's by its originator id, and a payout made by hand on the portal
// is a break.
func TestReconcileProductionMPesa(t *testing.T) {
	t.Parallel()
	fake := mpesatest.NewServer(t, mpesaCreds)
	env := productionLightning(t, lndtest.NewNode(t))
	for k, v := range mpesaEnv(t, fake) {
		env[k] = v
	}
	statements := t.TempDir()
	env["LEDGER_MPESA_STATEMENTS_DIR"] = statements
	public, forward := forwardedURL(t)
	env["LEDGER_PUBLIC_URL"] = public
	p := newPaymentSetup(t, env)
	forward(p.s.URL)
	from := time.Now().UTC().Add(-time.Minute).Truncate(time.Second)

	id := p.pay(t, p.utok, fmt.Sprintf(`{"merchantId":%q,"amount":1000,"reference":"r","fromCountry":"Kenya"}`, p.keMomo))["id"].(string)
	for deadline := time.Now().Add(10 * time.Second); len(fake.Prompts()) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no prompt was sent")
		}
	}
	fake.Approve(fake.Prompts()[0].CheckoutID)
	p.waitFor(t, id, 20*time.Second, statusIs("success"))
	fake.AddToReport(mpesatest.ReportRow{ShortCode: mpesaCreds.B2CShortCode, Receipt: "TKHBYHAND1", Withdrawn: 4200,
		Details: "Business Payment to 254700000000", ReasonType: "Business Payment to Customer"})
	to := time.Now().UTC().Add(time.Minute).Truncate(time.Second)
	for _, code := range []string{mpesaCreds.ShortCode, mpesaCreds.B2CShortCode} {
		if err := os.WriteFile(filepath.Join(statements, code+".csv"), fake.Report(code, from, to), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	rep := p.s.reconcile(t, "MOMO", from, to)
	if got := rep.found(); rep.Matched != 2 || !slices.Equal(got, []string{"provider_only TKHBYHAND1 open true"}) {
		t.Errorf("MOMO: got %d matched, %v; want the deposit and the payout matched, the payout by hand a break", rep.Matched, got)
	}
}

// TestReconcileProductionUSDT reconciles USDT deposits with the token's
// Transfer logs on a real chain (geth --dev): a deposit whose value has a
// fraction of a cent pairs with the ledger's deposit in whole cents by
// "txhash:logindex", and a transfer the payment could not take pairs with
// the unmatched funds that hold it.
func TestReconcileProductionUSDT(t *testing.T) {
	t.Parallel()
	chain := gethtest.Start(t)
	token := chain.DeployToken(t)
	env := productionLightning(t, lndtest.NewNode(t))
	env["LEDGER_USDT_XPUB"], env["LEDGER_ETH_RPC_URL"], env["LEDGER_USDT_CONTRACT"] = testXPub(t), chain.URL, token
	env["LEDGER_ETH_CONFIRMATIONS"], env["LEDGER_ETH_POLL"] = "2", "100ms"
	p := newPaymentSetup(t, env)
	from := time.Now().UTC().Add(-time.Minute).Truncate(time.Second)
	got := p.pay(t, p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":2000,"fromCountry":"USDT"}`, p.btc))
	id := got["id"].(string)
	var d struct{ Address string }
	jsonMember(t, got, "depositBankDetails", &d)
	chain.Transfer(t, token, d.Address, 20_000_005) // 20.000005 USDT: credited 20.00
	chain.Mine(t, 2)
	p.waitFor(t, id, 20*time.Second, func(p map[string]any) bool { return p["status"] != "created" })
	chain.Transfer(t, token, d.Address, 1_000_000) // after the payment took its funds: unmatched
	chain.Mine(t, 2)
	waitUnmatchedTransfers(t, p.s, 1)
	rep := p.s.reconcile(t, "USDT", from, time.Now().UTC().Add(time.Minute).Truncate(time.Second))
	if rep.Matched != 2 || len(rep.Breaks) != 0 {
		t.Errorf("USDT: got %d matched, breaks %v; want the deposit and the unmatched transfer matched", rep.Matched, rep.found())
	}
}
