package lndtest

import (
	"crypto/rand"
	"crypto/sha256"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ledger/ledger/workers/rails/lightning"
)

// Metadata is the payee's LUD-06 metadata; its SHA-256 is every invoice's
// description hash unless Edit changes it.
const Metadata = `[["text/plain","Pay alice"],["text/identifier","alice@example.com"]]`

// Payee is a recipient's LNURL-pay service (LUD-06) over plain http (the
// client must allow http): its payRequest at /lnurlp/alice and a callback
// that makes a fresh invoice, with a fresh preimage it tells the node, on
// every call, as real services do.
type Payee struct {
	srv  *httptest.Server
	node *Node

	mu    sync.Mutex
	edit  func(b *lightning.Bolt11) // changes the invoice before it is signed
	calls int                       // callback calls: invoices made
}

// NewPayee starts a payee whose invoices node can pay.
func NewPayee(t *testing.T, node *Node) *Payee {
	p := &Payee{node: node}
	p.srv = httptest.NewServer(p)
	t.Cleanup(p.srv.Close)
	return p
}

// LNURL is the bech32 LNURL of the payee's payRequest.
func (p *Payee) LNURL() string {
	return lightning.EncodeLNURL(p.srv.URL + "/lnurlp/alice")
}

// Edit makes the payee change every invoice before signing it (a wrong
// amount, an old timestamp), as a broken or hostile service would.
func (p *Payee) Edit(edit func(b *lightning.Bolt11)) { p.mu.Lock(); p.edit = edit; p.mu.Unlock() }

// Invoices counts the invoices the payee made.
func (p *Payee) Invoices() int { p.mu.Lock(); defer p.mu.Unlock(); return p.calls }

func (p *Payee) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/lnurlp/alice":
		writeJSON(w, http.StatusOK, map[string]any{"tag": "payRequest", "callback": p.srv.URL + "/cb",
			"minSendable": 1_000, "maxSendable": 1_000_000_000_000, "metadata": Metadata})
	case "/cb":
		msat, err := strconv.ParseUint(r.URL.Query().Get("amount"), 10, 64)
		if err != nil {
			writeJSON(w, http.StatusOK, map[string]any{"status": "ERROR", "reason": "bad amount"})
			return
		}
		var preimage [32]byte
		_, _ = rand.Read(preimage[:])
		desc := sha256.Sum256([]byte(Metadata))
		b := lightning.Bolt11{Network: lightning.Regtest, AmountMsat: msat, Timestamp: time.Now(),
			PaymentHash: sha256.Sum256(preimage[:]), DescriptionHash: &desc, Expiry: 10 * time.Minute}
		p.mu.Lock()
		p.calls++
		if p.edit != nil {
			p.edit(&b)
		}
		p.mu.Unlock()
		pr, err := lightning.Encode(b, nodeKey)
		if err != nil {
			writeJSON(w, http.StatusOK, map[string]any{"status": "ERROR", "reason": err.Error()})
			return
		}
		p.node.learn(preimage)
		writeJSON(w, http.StatusOK, map[string]any{"pr": pr, "routes": []any{}})
	default:
		http.NotFound(w, r)
	}
}
