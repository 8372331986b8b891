package main

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/google/uuid"

	"github.com/ledger/ledger/workers/rails/ethereum"
	"github.com/ledger/ledger/workers/rails/ethereum/gethtest"
	"github.com/ledger/ledger/workers/rails/lightning/lndtest"
)

// testXPub is the extended public key of m/44'/60'/0' under a test seed.
func testXPub(t *testing.T) string {
	t.Helper()
	k, err := hdkeychain.NewMaster(bytes.Repeat([]byte{7}, 32), &chaincfg.MainNetParams)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []uint32{44, 60, 0} {
		if k, err = k.Derive(hdkeychain.HardenedKeyStart + i); err != nil {
			t.Fatal(err)
		}
	}
	if k, err = k.Neuter(); err != nil {
		t.Fatal(err)
	}
	return k.String()
}

// waitUnmatchedTransfers waits until n USDT transfers are recorded
// unmatched.
func waitUnmatchedTransfers(t *testing.T, s *testServer, n int) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var unmatched int
		s.queryRow(t, `SELECT count(*) FROM usdt_transfers WHERE status = 'unmatched'`, nil, &unmatched)
		if unmatched == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d USDT transfers recorded unmatched, want %d", unmatched, n)
		}
	}
}

// TestProductionUSDTDeposits: two production ledgerd processes watch a
// real chain (geth --dev) for a USDT payment's deposits. Its address is
// derived from the xpub at its stored index. A confirmed transfer of part
// of the amount is credited and the payment waits for the rest; a
// transfer whose block is reorganised away before its confirmations is
// never credited; the rest moves the payment to deposited, each transfer
// counted once although both processes read every block. A transfer to
// the address once the payment has its funds is left unmatched for an
// operator.
func TestProductionUSDTDeposits(t *testing.T) {
	t.Parallel()
	chain := gethtest.Start(t)
	token := chain.DeployToken(t)
	xpub := testXPub(t)
	env := productionLightning(t, lndtest.NewNode(t))
	env["LEDGER_USDT_XPUB"], env["LEDGER_ETH_RPC_URL"], env["LEDGER_USDT_CONTRACT"] = xpub, chain.URL, token
	env["LEDGER_ETH_CONFIRMATIONS"], env["LEDGER_ETH_POLL"] = "3", "100ms"
	p := newPaymentSetup(t, env)
	env = onStore(p.s, env)
	second := startServer(t, env)

	checkRailReady(t, p.s, "ethereum")
	got := p.pay(t, p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":2000,"fromCountry":"USDT"}`, p.btc))
	id := got["id"].(string)
	var d struct {
		Address string
		Amount  int64
	}
	jsonMember(t, got, "depositBankDetails", &d)
	var idx int64
	p.s.queryRow(t, `SELECT idx FROM usdt_addresses WHERE payment_id = $1`, []any{id}, &idx)
	key, err := ethereum.ParseXPub(xpub)
	if err != nil {
		t.Fatal(err)
	}
	if want, err := key.Address(uint32(idx)); err != nil || d.Address != want || d.Amount != 2000 {
		t.Fatalf("deposit: got %s for USDT cents %d, want m/44'/60'/0'/0/%d = %s (%v) for 2000", d.Address, d.Amount, idx, want, err)
	}

	// 8 USDT, confirmed: credited, the payment waits for the rest.
	chain.Transfer(t, token, d.Address, 8_000_000)
	chain.Mine(t, 2)
	p.waitFor(t, id, 20*time.Second, func(p map[string]any) bool { return p["amountDeposited"] == 8.0 })

	// 5 USDT in a block that is reorganised away after one more block (two
	// of the three confirmations).
	reorged := chain.Transfer(t, token, d.Address, 5_000_000)
	chain.Mine(t, 1)
	// The watchers have read every block confirmed while the log existed.
	waitForCursor(t, p.s, reorged)
	chain.Rewind(t, reorged-1)

	// 12 USDT: the amount due, counted once by two processes.
	chain.Transfer(t, token, d.Address, 12_000_000)
	chain.Mine(t, 2)
	got = p.waitFor(t, id, 20*time.Second, func(p map[string]any) bool { return p["status"] != "created" })
	if s := statuses(got); len(s) < 2 || s[1] != "deposited" || got["amountDeposited"] != 20.0 {
		t.Errorf("got statusLogs %v and %v USDT deposited, want deposited with 20 (8 + 12; the reorganised 5 never counted)",
			s, got["amountDeposited"])
	}

	// 1 USDT more, once the payment has its funds, and 1 USDT to the
	// address of a payment whose creation failed after the address was
	// handed out: both unmatched.
	chain.Transfer(t, token, d.Address, 1_000_000)
	orphan, err := key.Address(1 << 30)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.s.app.pool.Exec(t.Context(), `INSERT INTO usdt_addresses (payment_id, tenant_id, idx, address) VALUES ($1, $2, $3, $4)`,
		uuid.New(), uuid.New(), 1<<30, strings.ToLower(orphan)); err != nil {
		t.Fatal(err)
	}
	chain.Transfer(t, token, orphan, 1_000_000)
	chain.Mine(t, 2)
	waitUnmatchedTransfers(t, p.s, 2)
	// Each is one item of the unmatched-funds queue, although both
	// processes read the blocks: the sender's address is the payer's.
	var queue []struct {
		Rail, Reason, Currency, Amount, DebtorAccount string
		TenantID                                      string
		PaymentID                                     *string
		Entry                                         struct{ Account, EntryRef string }
	}
	mustDecode(t, p.s.ledgerctl(t, "unmatched", "list", "--json"), &queue)
	if len(queue) != 2 {
		t.Fatalf("ledgerctl unmatched list: got %+v, want the two unmatched transfers once each", queue)
	}
	for _, u := range queue {
		late := u.PaymentID != nil && *u.PaymentID == id
		if u.Rail != "USDT" || u.Currency != "USDT" || u.Amount != "1" || !strings.HasPrefix(u.DebtorAccount, "0x") ||
			!strings.HasPrefix(u.Entry.Account, "USDT:0x") || !strings.Contains(u.Entry.EntryRef, ":") ||
			late && u.Reason != "not_awaiting_funds" || !late && (u.PaymentID != nil || u.Reason != "no_match") {
			t.Errorf("unmatched item: got %+v, want 1 USDT from its sender, not awaiting funds on %s or matching no payment", u, id)
		}
	}
	p.s.ledgerctl(t, "audit", "verify") // the suspense postings balance and the read models match the events
	// What ledgerctl gives the operator and the custody system.
	var rows []string
	for _, line := range bytes.Split(bytes.TrimSpace(p.s.ledgerctl(t, "usdt", "transfers")), []byte("\n")) {
		var tr struct{ Address, Amount, Status, Reason string }
		mustDecode(t, line, &tr)
		switch tr.Address {
		case d.Address:
			rows = append(rows, tr.Amount+" "+tr.Status)
		case orphan:
			rows = append(rows, tr.Amount+" "+tr.Status+": "+tr.Reason)
		default:
			t.Errorf("ledgerctl usdt transfers: address %s, want %s or %s", tr.Address, d.Address, orphan)
		}
	}
	if want := []string{"8 credited", "12 credited", "1 unmatched", "1 unmatched: no such payment"}; !slices.Equal(rows, want) {
		t.Errorf("ledgerctl usdt transfers: got %v, want %v", rows, want)
	}
	var addr struct {
		Address, Credited, Unmatched string
		Index                        int64
		Transfers                    int
	}
	mustDecode(t, bytes.Split(p.s.ledgerctl(t, "usdt", "addresses"), []byte("\n"))[0], &addr)
	if addr.Address != d.Address || addr.Index != idx || addr.Credited != "20" || addr.Unmatched != "1" || addr.Transfers != 3 {
		t.Errorf("ledgerctl usdt addresses: got %+v, want %s at index %d with 20 credited and 1 unmatched in 3 transfers",
			addr, d.Address, idx)
	}
	if !strings.Contains(p.s.logs.String()+second.logs.String(), "usdt_unmatched") {
		t.Error("no alert was logged for the unmatched transfer")
	}
	// A transfer made while no process runs is found by the next to start,
	// from the stored cursor.
	late := p.pay(t, p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":1500,"fromCountry":"USDT"}`, p.btc))
	var lateDeposit struct{ Address string }
	jsonMember(t, late, "depositBankDetails", &lateDeposit)
	for _, s := range []*testServer{p.s, second} {
		if err := s.stop(); err != nil {
			t.Fatal(err)
		}
	}
	chain.Transfer(t, token, lateDeposit.Address, 15_000_000)
	chain.Mine(t, 2)
	p.s = startServer(t, env)
	got = p.waitFor(t, late["id"].(string), 20*time.Second, func(p map[string]any) bool { return p["status"] != "created" })
	if s := statuses(got); len(s) < 2 || s[1] != "deposited" || got["amountDeposited"] != 15.0 {
		t.Errorf("late payment: got statusLogs %v and %v USDT deposited, want deposited with 15", s, got["amountDeposited"])
	}

	// The address of a payment stays the same.
	again := mustStatus(t, p.s.call(t, http.MethodGet, "/payments/"+id, p.tok, ""), http.StatusOK)
	jsonMember(t, again, "depositBankDetails", &d)
	if want, _ := key.Address(uint32(idx)); d.Address != want {
		t.Errorf("GET /payments/%s: address %s, want %s", id, d.Address, want)
	}
}

// waitForCursor waits until the USDT watchers have read up to block n.
func waitForCursor(t *testing.T, s *testServer, n uint64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var next int64
		s.queryRow(t, `SELECT coalesce(max(next_block), 0) FROM usdt_cursor`, nil, &next)
		if next >= int64(n) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the USDT watchers read up to block %d, not %d", next, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestProductionUSDTWithoutTheRail: in production with no USDT settings a
// USDT payment is refused before anything is created.
func TestProductionUSDTWithoutTheRail(t *testing.T) {
	t.Parallel()
	p := newPaymentSetup(t, productionLightning(t, lndtest.NewNode(t)))
	before := p.s.countEvents(t)
	r := p.s.call(t, http.MethodPost, "/payments", p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":2000,"fromCountry":"USDT"}`, p.btc))
	if pr := mustProblem(t, r, http.StatusServiceUnavailable, "rail_unavailable"); !strings.Contains(pr.Detail, "usdt") {
		t.Errorf("detail: got %q", pr.Detail)
	}
	if after := p.s.countEvents(t); after != before {
		t.Errorf("events: got %d more, want none", after-before)
	}
}

// TestUSDTConfiguration: ledgerd refuses to start with the USDT rail half
// configured, with a private or non-account key, or in sandbox mode.
func TestUSDTConfiguration(t *testing.T) {
	t.Parallel()
	xpub := testXPub(t)
	full := map[string]string{"LEDGER_MODE": "production", "LEDGER_MASTER_KEY_FILE": masterKey, "LEDGER_USDT_XPUB": xpub,
		"LEDGER_ETH_RPC_URL": "http://127.0.0.1:8545", "LEDGER_USDT_CONTRACT": "0xdAC17F958D2ee523a2206206994597C13D831ec7"}
	with := func(changes map[string]string) map[string]string { return changed(full, changes) }
	master, err := hdkeychain.NewMaster(bytes.Repeat([]byte{7}, 32), &chaincfg.MainNetParams)
	if err != nil {
		t.Fatal(err)
	}
	for name, env := range map[string]map[string]string{
		"no xpub":            with(map[string]string{"LEDGER_USDT_XPUB": ""}),
		"no node":            with(map[string]string{"LEDGER_ETH_RPC_URL": ""}),
		"no contract":        with(map[string]string{"LEDGER_USDT_CONTRACT": ""}),
		"a private key":      with(map[string]string{"LEDGER_USDT_XPUB": master.String()}),
		"the master's xpub":  with(map[string]string{"LEDGER_USDT_XPUB": mustNeuter(t, master)}),
		"a mistyped address": with(map[string]string{"LEDGER_USDT_CONTRACT": "0xdAC17F958D2ee523a2206206994597C13D831eC7"}),
		"bad URL":            with(map[string]string{"LEDGER_ETH_RPC_URL": "127.0.0.1:8545"}),
		"no confirmations":   with(map[string]string{"LEDGER_ETH_CONFIRMATIONS": "0"}),
		"in sandbox":         with(map[string]string{"LEDGER_MODE": "sandbox"}),
	} {
		if _, err := loadEnv(env); err == nil || !strings.Contains(err.Error(), "USDT") && !strings.Contains(err.Error(), "ETH") {
			t.Errorf("%s: got %v, want a USDT setting error", name, err)
		}
	}
	cfg, err := loadEnv(with(nil))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.USDT.Confirmations != 12 || cfg.USDT.Poll != 15*time.Second {
		t.Errorf("defaults: got %d confirmations every %v, want 12 every 15s", cfg.USDT.Confirmations, cfg.USDT.Poll)
	}
}

func mustNeuter(t *testing.T, k *hdkeychain.ExtendedKey) string {
	t.Helper()
	pub, err := k.Neuter()
	if err != nil {
		t.Fatal(err)
	}
	return pub.String()
}

// TestProductionUSDTTransferBeforeExpiry: a transfer made before the
// payment's validity ended holds its expiry while it awaits confirmations,
// then deposits it; a payment with no transfer expires on time.
func TestProductionUSDTTransferBeforeExpiry(t *testing.T) {
	t.Parallel()
	chain := gethtest.Start(t)
	token := chain.DeployToken(t)
	env := productionLightning(t, lndtest.NewNode(t))
	env["LEDGER_USDT_XPUB"], env["LEDGER_ETH_RPC_URL"], env["LEDGER_USDT_CONTRACT"] = testXPub(t), chain.URL, token
	env["LEDGER_ETH_CONFIRMATIONS"], env["LEDGER_ETH_POLL"], env["LEDGER_VALIDITY"] = "3", "100ms", "usdt=3s"
	p := newPaymentSetup(t, env)
	pay := func() (id, address string) {
		got := p.pay(t, p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":2000,"fromCountry":"USDT"}`, p.btc))
		var d struct{ Address string }
		jsonMember(t, got, "depositBankDetails", &d)
		return got["id"].(string), d.Address
	}
	paid, address := pay()
	unpaid, _ := pay()
	chain.Transfer(t, token, address, 20_000_000)

	p.waitFor(t, unpaid, 20*time.Second, statusIs("expired"))
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(p.s.logs.String(), `"msg":"expiry: held, a USDT transfer made in time awaits confirmations","payment":"`+paid) {
		if time.Now().After(deadline) {
			t.Fatal("the expiry of the paid payment was not held")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := mustStatus(t, p.s.call(t, http.MethodGet, "/payments/"+paid, p.tok, ""), http.StatusOK); got["status"] != "created" {
		t.Fatalf("paid payment: got %v while its transfer awaits confirmations, want created", got["status"])
	}
	chain.Mine(t, 2)
	got := p.waitFor(t, paid, 20*time.Second, func(p map[string]any) bool { return p["status"] != "created" })
	if s := statuses(got); len(s) < 2 || s[1] != "deposited" || got["amountDeposited"] != 20.0 {
		t.Errorf("paid payment: got statusLogs %v and %v USDT deposited, want deposited with 20", s, got["amountDeposited"])
	}
}
