package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/ledger/ledger/workers/rails/lightning/lndharness"
	"github.com/ledger/ledger/workers/rails/lightning/lndtest"
	"github.com/ledger/ledger/workers/rails/paystack/paystacktest"
)

// productionLightning is production ledgerd's settings against a fake LND
// node and a fake CoinGecko price feed.
func productionLightning(t *testing.T, node *lndtest.Node) map[string]string {
	t.Helper()
	return productionLND(t, node.URL(), lndtest.Macaroon, node.CertPEM())
}

// productionLND is production ledgerd's settings against the LND node at
// url and a fake CoinGecko price feed.
func productionLND(t *testing.T, url string, macaroon, certPEM []byte) map[string]string {
	t.Helper()
	feed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"bitcoin":{"zar":1800000,"kes":12900000,"ngn":150000000,"gbp":76000,"eur":87000,"usd":100000}}`)
	}))
	t.Cleanup(feed.Close)
	return map[string]string{"LEDGER_MODE": "production", "LEDGER_PRICE_FEED_URL": feed.URL,
		"LEDGER_LND_URL": url, "LEDGER_LND_MACAROON_FILE": settingFile(t, "ledger.macaroon", macaroon),
		"LEDGER_LND_TLS_CERT_FILE":     settingFile(t, "tls.cert", certPEM),
		"LEDGER_LND_PREIMAGE_KEY_FILE": settingFile(t, "preimage.key", bytes.Repeat([]byte{3}, 32)),
		"LEDGER_LND_INVOICE_POLL":      "100ms", "LEDGER_EXPIRY_POLL": "100ms"}
}

// checkRailReady fails t unless s's GET /readyz reports rail ok.
func checkRailReady(t *testing.T, s *testServer, rail string) {
	t.Helper()
	var ready struct{ Rails map[string]string }
	mustDecode(t, mustOK(t, s.get(t, "/readyz")), &ready)
	if ready.Rails[rail] != "ok" {
		t.Errorf("GET /readyz: got rails %v, want %s ok", ready.Rails, rail)
	}
}

// TestProductionLightningDeposits: in production mode two ledgerd processes
// watch LND; a paid invoice moves its payment to deposited once, and the
// lifecycle goes on to transferring (a South African bank payout, which
// Paystack keeps pending here, so it waits there). An invoice paid while no
// process runs is found by the next process to start.
func TestProductionLightningDeposits(t *testing.T) {
	t.Parallel()
	node := lndtest.NewNode(t)
	env := productionLightning(t, node)
	env["LEDGER_PAYSTACK_SECRET_KEY"], env["LEDGER_PAYSTACK_BASE_URL"] = paystackTestKey, paystacktest.NewServer(t, paystackTestKey).URL()
	p := newPaymentSetup(t, env)
	env = onStore(p.s, env)
	second := startServer(t, env)

	pay := func() (id, hash string) {
		t.Helper()
		got := p.pay(t, p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":500,"reference":"r"}`, p.za))
		var inv struct{ PaymentHash string }
		mustDecode(t, []byte(got["lightningInvoice"].(string)), &inv)
		return got["id"].(string), inv.PaymentHash
	}
	id, hash := pay()
	node.Settle(hash, time.Now())
	got := p.waitFor(t, id, 20*time.Second, statusIs("transferring"))
	var inv struct{ AmountSats float64 }
	mustDecode(t, []byte(got["lightningInvoice"].(string)), &inv)
	if s := statuses(got); !slices.Equal(s, []string{"created", "deposited", "transferring"}) || got["amountDeposited"] != inv.AmountSats {
		t.Errorf("got statusLogs %v and %v sats deposited, want created, deposited, transferring and %v sats",
			s, got["amountDeposited"], inv.AmountSats)
	}

	// Both processes stop; the payer pays meanwhile; a new process finds it.
	late, lateHash := pay()
	if err := p.s.stop(); err != nil {
		t.Fatal(err)
	}
	if err := second.stop(); err != nil {
		t.Fatal(err)
	}
	node.Settle(lateHash, time.Now())
	p.s = startServer(t, env)
	got = p.waitFor(t, late, 20*time.Second, statusIs("transferring"))
	if s := statuses(got); !slices.Equal(s, []string{"created", "deposited", "transferring"}) {
		t.Errorf("late payment's statusLogs: got %v, want created, deposited, transferring", s)
	}
}

// TestProductionLightningAgainstRealLND: production ledgerd with
// LEDGER_LND_* pointing at a real lnd node on regtest, whose peer node pays
// the deposit invoices and is paid the payouts. One network serves every
// subtest, since starting it takes longer than all of them.
func TestProductionLightningAgainstRealLND(t *testing.T) {
	net := lndharness.Start(t)
	pem, err := os.ReadFile(net.Service.TLSCertPath())
	if err != nil {
		t.Fatal(err)
	}
	macaroon := net.Service.BakeMacaroon(lndharness.AdapterPermissions...)
	production := func(t *testing.T) map[string]string {
		env := productionLND(t, net.Service.RESTURL, macaroon, pem)
		env["LEDGER_PAYSTACK_SECRET_KEY"], env["LEDGER_PAYSTACK_BASE_URL"] = paystackTestKey, paystacktest.NewServer(t, paystackTestKey).URL()
		return env
	}

	// The deposit invoice is the node's, the peer node pays it, and the
	// payment moves on from deposited as with the fake.
	t.Run("a paid deposit invoice moves the payment on", func(t *testing.T) {
		p := newPaymentSetup(t, production(t))
		got := p.pay(t, p.tok, fmt.Sprintf(`{"merchantId":%q,"amount":500,"reference":"r"}`, p.za))
		var inv struct {
			PaymentRequest string
			PaymentHash    string
			AmountSats     int64
		}
		mustDecode(t, []byte(got["lightningInvoice"].(string)), &inv)
		if state, _ := net.Service.Received(inv.PaymentHash); state != "OPEN" {
			t.Fatalf("the service's node has the deposit invoice %s, want OPEN", state)
		}
		if pay, err := net.Peer.Pay(inv.PaymentRequest); err != nil || pay.Status != "SUCCEEDED" {
			t.Fatalf("peer paid the deposit invoice: %+v, %v", pay, err)
		}
		got = p.waitFor(t, got["id"].(string), 20*time.Second, statusIs("transferring"))
		if s := statuses(got); !slices.Equal(s, []string{"created", "deposited", "transferring"}) || got["amountDeposited"] != float64(inv.AmountSats) {
			t.Errorf("got statusLogs %v and %v sats deposited, want created, deposited, transferring and %d sats",
				s, got["amountDeposited"], inv.AmountSats)
		}
	})
	t.Run("an invoice that expires unpaid expires the payment", func(t *testing.T) {
		realDepositExpires(t, net, production(t))
	})
	t.Run("ledgerd killed mid-payout finds the payment by hash, paid once", func(t *testing.T) {
		realPayoutSurvivesKill(t, net, production(t))
	})
}
