package lndharness

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/pem"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// HeldPayee is a recipient's LNURL-pay service, over https, whose callback
// hands out hold invoices of the node's (invoicesrpc): a payment to one is
// accepted and held, in flight for its payer, until Settle. It keeps the
// payer between its send and the outcome for as long as a test needs.
type HeldPayee struct {
	LNURL    string // bech32, of an https URL on loopback
	CertFile string // the service's certificate (PEM), for a client's SSL_CERT_FILE

	node      *Node
	mu        sync.Mutex
	hashes    []string            // payment hashes (hex) of the invoices handed out, oldest first
	preimages map[string][32]byte // by payment hash
}

// HeldPayee starts a held payee of the node's for the test's lifetime.
func (node *Node) HeldPayee() *HeldPayee {
	node.t.Helper()
	p := &HeldPayee{node: node, preimages: map[string][32]byte{}}
	srv, lnurl := node.serveLNURLPay(true, func(msat uint64, descHash string) ([]byte, error) {
		var preimage [32]byte
		_, _ = rand.Read(preimage[:])
		hash := sha256.Sum256(preimage[:])
		// lncli reads flags only before the arguments.
		out, err := node.tryLncli("addholdinvoice", "--amt_msat", strconv.FormatUint(msat, 10),
			"--description_hash", descHash, "--expiry", "600", hex.EncodeToString(hash[:]))
		if err == nil {
			p.mu.Lock()
			p.hashes = append(p.hashes, hex.EncodeToString(hash[:]))
			p.preimages[hex.EncodeToString(hash[:])] = preimage
			p.mu.Unlock()
		}
		return out, err
	})
	p.LNURL = lnurl
	p.CertFile = filepath.Join(node.t.TempDir(), "held-payee.pem")
	cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(p.CertFile, cert, 0o600); err != nil {
		node.t.Fatal(err)
	}
	return p
}

// Hashes are the payment hashes (hex) of the invoices handed out, oldest first.
func (p *HeldPayee) Hashes() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.hashes...)
}

// Settle takes the held payment to hash (hex) with its preimage, which
// reaches the payer: its payment succeeds.
func (p *HeldPayee) Settle(hash string) {
	p.node.t.Helper()
	p.mu.Lock()
	preimage, ok := p.preimages[hash]
	p.mu.Unlock()
	if !ok {
		p.node.t.Fatalf("lndharness: no held invoice %s", hash)
	}
	p.node.lncli(nil, "settleinvoice", hex.EncodeToString(preimage[:]))
}
