package lndharness

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"

	"github.com/ledger/ledger/workers/rails/lightning"
)

// PayeeMetadata is the LUD-06 metadata of the node's LNURL-pay service;
// its SHA-256 is every invoice's description hash.
const PayeeMetadata = `[["text/plain","Pay the peer"],["text/identifier","peer@example.com"]]`

// LNURLPayee starts, for the test's lifetime, a recipient's LNURL-pay
// service (LUD-06, over plain http: the client must allow it) whose
// callback hands out a fresh invoice of this node's for the amount asked,
// and returns its bech32 LNURL.
func (node *Node) LNURLPayee() string {
	node.t.Helper()
	_, lnurl := node.serveLNURLPay(false, func(msat uint64, descHash string) ([]byte, error) {
		return node.tryLncli("addinvoice", "--amt_msat", strconv.FormatUint(msat, 10),
			"--description_hash", descHash, "--expiry", "600")
	})
	return lnurl
}

// serveLNURLPay starts, for the test's lifetime, an LNURL-pay service
// (LUD-06; over https when useTLS) whose callback answers with the
// invoice addInvoice makes, given the amount and the metadata's hash
// (hex), as lncli prints it. It returns the server and its bech32 LNURL.
func (node *Node) serveLNURLPay(useTLS bool, addInvoice func(msat uint64, descHash string) ([]byte, error)) (*httptest.Server, string) {
	node.t.Helper()
	var srv *httptest.Server
	srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/lnurlp/peer":
			_ = json.NewEncoder(w).Encode(map[string]any{"tag": "payRequest", "callback": srv.URL + "/cb",
				"minSendable": 1_000, "maxSendable": int64(ChannelSats) * 1000, "metadata": PayeeMetadata})
		case "/cb":
			msat, err := strconv.ParseUint(r.URL.Query().Get("amount"), 10, 64)
			if err != nil {
				_ = json.NewEncoder(w).Encode(map[string]any{"status": "ERROR", "reason": "bad amount"})
				return
			}
			desc := sha256.Sum256([]byte(PayeeMetadata))
			out, err := addInvoice(msat, hex.EncodeToString(desc[:]))
			var inv struct {
				PaymentRequest string `json:"payment_request"`
			}
			if err == nil {
				err = json.Unmarshal(out, &inv)
			}
			if err != nil {
				_ = json.NewEncoder(w).Encode(map[string]any{"status": "ERROR", "reason": err.Error()})
				return
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"pr": inv.PaymentRequest, "routes": []any{}})
		default:
			http.NotFound(w, r)
		}
	}))
	if useTLS {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	node.t.Cleanup(srv.Close)
	return srv, lightning.EncodeLNURL(srv.URL + "/lnurlp/peer")
}

// PayeeInvoicesPaid lists the sats paid to each settled invoice the
// node's LNURL-pay service made.
func (node *Node) PayeeInvoicesPaid() []int64 {
	node.t.Helper()
	var list struct {
		Invoices []struct {
			DescriptionHash string `json:"description_hash"` // hex: lncli prints bytes so
			State           string `json:"state"`
			AmtPaidSat      string `json:"amt_paid_sat"`
		} `json:"invoices"`
	}
	node.lncli(&list, "listinvoices", "--max_invoices", "1000")
	desc := sha256.Sum256([]byte(PayeeMetadata))
	var paid []int64
	for _, inv := range list.Invoices {
		if inv.State == "SETTLED" && inv.DescriptionHash == hex.EncodeToString(desc[:]) {
			sats, _ := strconv.ParseInt(inv.AmtPaidSat, 10, 64)
			paid = append(paid, sats)
		}
	}
	return paid
}
