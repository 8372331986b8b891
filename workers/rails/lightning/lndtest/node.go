// Package lndtest is a fake LND REST node and a fake LNURL-pay service for
// tests outside package lightning (the payout rail, the deposit detector,
// ledgerd end to end). The node keeps invoices and payments by payment hash
// as lnd does: it makes a deposit invoice with the preimage it is given,
// settles it when a test says the payer paid, and pays a payment hash once.
package lndtest

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"

	"github.com/ledger/ledger/workers/rails/lightning"
)

// Macaroon is what the node expects in Grpc-Metadata-macaroon (hex).
var Macaroon = []byte("lndtest macaroon")

// nodeKey signs every invoice the fakes make; the payer's node (LND) is
// the one that verifies signatures, and this fake does not.
var nodeKey = secp256k1.PrivKeyFromBytes(func() []byte { h := sha256.Sum256([]byte("lndtest node")); return h[:] }())

// Node is a fake LND. Payments succeed unless FailPayments says otherwise.
type Node struct {
	t   Reporter
	srv *httptest.Server

	mu        sync.Mutex
	fail      string                // FAILURE_REASON_... for every payment; "" succeeds
	drop      bool                  // record payments but answer sends with 502, as a crash would lose the answer
	down      bool                  // answer everything with 503
	broken    map[[32]byte]bool     // invoices whose lookups fail (500)
	invoices  map[[32]byte]*invoice // deposit invoices
	payments  map[[32]byte]string   // status of each payment we sent, by hash
	preimages map[[32]byte][32]byte // what the payees' nodes know, to settle our payments
	sends     int                   // POST /v2/router/send calls
	sent      []sentPayment         // each payment hash sent, in order: ListPayments' index
	added     uint64                // invoices made: the last add_index
	held      chan struct{}         // non-nil: payments sent stay in flight until it is closed
	// settleOnCancel: the payer's payment lands just before the next
	// cancel of its invoice, which then finds it settled.
	settleOnCancel bool
}

type invoice struct {
	pr        string
	value     int64
	created   time.Time
	expiry    int64
	state     string
	paid      int64
	settledAt time.Time
	index     uint64 // add_index
}

// Reporter is told of a fake's misuse: a test's testing.TB, or the crash
// harness's own record when it runs the node under its load.
type Reporter interface {
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// NewNode starts a fake node for the test's lifetime.
func NewNode(t *testing.T) *Node {
	n := StartNode(t)
	t.Cleanup(n.Close)
	return n
}

// StartNode starts a fake node outside a test's lifetime; the caller closes it.
func StartNode(r Reporter) *Node {
	n := &Node{t: r, invoices: map[[32]byte]*invoice{}, payments: map[[32]byte]string{},
		preimages: map[[32]byte][32]byte{}}
	n.srv = httptest.NewTLSServer(n)
	return n
}

// Close stops the node.
func (n *Node) Close() { n.srv.Close() }

// URL is the node's REST base URL (https).
func (n *Node) URL() string { return n.srv.URL }

// CertPEM is the node's TLS certificate, as lnd's tls.cert file holds it.
func (n *Node) CertPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: n.srv.Certificate().Raw})
}

// Client trusts the node's certificate.
func (n *Node) Client() *http.Client { return n.srv.Client() }

// LND returns a client of this node deriving preimages from preimageKey.
func (n *Node) LND(preimageKey []byte) *lightning.LND {
	c, err := lightning.NewLND(n.URL(), Macaroon, preimageKey, n.Client())
	if err != nil {
		n.t.Fatalf("lndtest: %v", err)
	}
	return c
}

// Settle pays the deposit invoice with paymentHash (hex) in full at at, as
// a payer's wallet would. A canceled invoice cannot be paid: Settle
// reports false and changes nothing.
func (n *Node) Settle(paymentHash string, at time.Time) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	inv := n.invoices[mustHash(n.t, paymentHash)]
	if inv == nil {
		n.t.Fatalf("lndtest: no invoice %s to settle", paymentHash)
	}
	if inv.state == "CANCELED" {
		return false
	}
	inv.state, inv.paid, inv.settledAt = "SETTLED", inv.value, at
	return true
}

// BreakLookup makes every lookup of the invoice with paymentHash (hex)
// fail with a 500, as one the node cannot read would.
func (n *Node) BreakLookup(paymentHash string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.broken == nil {
		n.broken = map[[32]byte]bool{}
	}
	n.broken[mustHash(n.t, paymentHash)] = true
}

// SettleOnCancel makes the next cancel of an open invoice find it settled,
// as when the payer's payment lands between a lookup and the cancel.
func (n *Node) SettleOnCancel() { n.mu.Lock(); n.settleOnCancel = true; n.mu.Unlock() }

// InvoiceState is the state of the deposit invoice with paymentHash (hex).
func (n *Node) InvoiceState(paymentHash string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if inv := n.invoices[mustHash(n.t, paymentHash)]; inv != nil {
		return inv.state
	}
	return ""
}

// FailPayments makes every payment fail with reason (FAILURE_REASON_...).
func (n *Node) FailPayments(reason string) { n.mu.Lock(); n.fail = reason; n.mu.Unlock() }

// HoldPayments keeps the payments sent from now on in flight, their sends
// answering nothing, until ReleasePayments: as a node downstream holding
// our HTLCs would.
func (n *Node) HoldPayments() { n.mu.Lock(); n.held = make(chan struct{}); n.mu.Unlock() }

// ReleasePayments settles the payments held in flight.
func (n *Node) ReleasePayments() {
	n.mu.Lock()
	defer n.mu.Unlock()
	for hash, status := range n.payments {
		if status == "IN_FLIGHT" {
			n.payments[hash] = "SUCCEEDED"
		}
	}
	if n.held != nil {
		close(n.held)
		n.held = nil
	}
}

// DropAnswers makes sends start the payment but lose the answer (502).
func (n *Node) DropAnswers(drop bool) { n.mu.Lock(); n.drop = drop; n.mu.Unlock() }

// SetDown makes the node answer 503 to everything, as one that is restarting.
func (n *Node) SetDown(down bool) { n.mu.Lock(); n.down = down; n.mu.Unlock() }

// Sends counts the payments asked for (POST /v2/router/send).
func (n *Node) Sends() int { n.mu.Lock(); defer n.mu.Unlock(); return n.sends }

// Hashes counts the distinct payment hashes ever sent, paid or not.
func (n *Node) Hashes() int { n.mu.Lock(); defer n.mu.Unlock(); return len(n.payments) }

// Payments counts the payment hashes paid successfully.
func (n *Node) Payments() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	c := 0
	for _, s := range n.payments {
		if s == "SUCCEEDED" {
			c++
		}
	}
	return c
}

func (n *Node) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Grpc-Metadata-macaroon") != hex.EncodeToString(Macaroon) {
		grpcError(w, http.StatusInternalServerError, "verification failed: signature mismatch after caveat verification")
		return
	}
	n.mu.Lock()
	down := n.down
	n.mu.Unlock()
	switch {
	case down:
		grpcError(w, http.StatusServiceUnavailable, "server is still starting")
	case r.Method == http.MethodPost && r.URL.Path == "/v1/invoices":
		n.addInvoice(w, r)
	case r.Method == http.MethodGet && r.URL.Path == "/v1/invoices":
		n.listInvoices(w, r)
	case r.Method == http.MethodGet && r.URL.Path == "/v1/payments":
		n.listPayments(w, r)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/invoice/"):
		n.lookupInvoice(w, r)
	case r.Method == http.MethodPost && r.URL.Path == "/v2/invoices/cancel":
		n.cancelInvoice(w, r)
	case r.Method == http.MethodPost && r.URL.Path == "/v2/router/send":
		n.send(w, r)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v2/router/track/"):
		n.track(w, r)
	default:
		grpcError(w, http.StatusNotImplemented, "Not Implemented")
	}
}

func (n *Node) addInvoice(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Memo            string `json:"memo"`
		DescriptionHash []byte `json:"description_hash"`
		RPreimage       []byte `json:"r_preimage"`
		Value           string `json:"value"`
		Expiry          string `json:"expiry"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.RPreimage) != 32 {
		grpcError(w, http.StatusBadRequest, "bad request")
		return
	}
	value, _ := strconv.ParseInt(req.Value, 10, 64)
	expiry, _ := strconv.ParseInt(req.Expiry, 10, 64)
	hash := sha256.Sum256(req.RPreimage)
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, ok := n.invoices[hash]; ok {
		grpcError(w, http.StatusInternalServerError, "invoice with payment hash already exists")
		return
	}
	now := time.Now().Truncate(time.Second)
	b := lightning.Bolt11{Network: lightning.Regtest, AmountMsat: uint64(value) * 1000, Timestamp: now,
		PaymentHash: hash, Description: req.Memo, Expiry: time.Duration(expiry) * time.Second}
	if req.DescriptionHash != nil {
		b.DescriptionHash = (*[32]byte)(req.DescriptionHash)
	}
	pr, err := lightning.Encode(b, nodeKey)
	if err != nil {
		n.t.Errorf("lndtest: %v", err)
	}
	n.added++
	n.invoices[hash] = &invoice{pr: pr, value: value, created: now, expiry: expiry, state: "OPEN", index: n.added}
	writeJSON(w, http.StatusOK, map[string]any{"r_hash": hash[:], "payment_request": pr, "add_index": strconv.FormatUint(n.added, 10)})
}

func (n *Node) lookupInvoice(w http.ResponseWriter, r *http.Request) {
	hash, ok := parseHex(strings.TrimPrefix(r.URL.Path, "/v1/invoice/"))
	n.mu.Lock()
	inv, broken := n.invoices[hash], n.broken[hash]
	var body map[string]any
	if inv != nil {
		body = map[string]any{"r_hash": hash[:], "payment_request": inv.pr, "value": strconv.FormatInt(inv.value, 10),
			"creation_date": strconv.FormatInt(inv.created.Unix(), 10), "expiry": strconv.FormatInt(inv.expiry, 10),
			"state": inv.state, "amt_paid_sat": strconv.FormatInt(inv.paid, 10), "settle_date": "0"}
		if !inv.settledAt.IsZero() {
			body["settle_date"] = strconv.FormatInt(inv.settledAt.Unix(), 10)
		}
	}
	n.mu.Unlock()
	switch {
	case !ok:
		grpcError(w, http.StatusInternalServerError, "encoding/hex: invalid byte")
	case broken:
		grpcError(w, http.StatusInternalServerError, "cannot read invoice")
	case inv == nil:
		grpcError(w, http.StatusNotFound, "there are no existing invoices")
	default:
		writeJSON(w, http.StatusOK, body)
	}
}

// cancelInvoice cancels as lnd's invoicesrpc CancelInvoice does: an open
// (or accepted) invoice becomes CANCELED, a canceled one stays so without
// an error, and a settled or unknown one is an error of code Unknown.
func (n *Node) cancelInvoice(w http.ResponseWriter, r *http.Request) {
	var req struct {
		PaymentHash []byte `json:"payment_hash"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.PaymentHash) != 32 {
		grpcError(w, http.StatusBadRequest, "bad request")
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	inv := n.invoices[[32]byte(req.PaymentHash)]
	if inv != nil && inv.state != "SETTLED" && inv.state != "CANCELED" && n.settleOnCancel {
		n.settleOnCancel = false
		inv.state, inv.paid, inv.settledAt = "SETTLED", inv.value, time.Now()
	}
	switch {
	case inv == nil:
		grpcError(w, http.StatusInternalServerError, "unable to locate invoice")
	case inv.state == "SETTLED":
		grpcError(w, http.StatusInternalServerError, "invoice already settled")
	default:
		inv.state = "CANCELED"
		writeJSON(w, http.StatusOK, map[string]any{})
	}
}

// send pays as lnd's SendPaymentV2 does: one payment per hash; a second
// send for a hash that succeeded or is in flight is refused.
func (n *Node) send(w http.ResponseWriter, r *http.Request) {
	var req struct {
		PaymentRequest string `json:"payment_request"`
		FeeLimitSat    string `json:"fee_limit_sat"`
	}
	_ = json.NewDecoder(r.Body).Decode(&req)
	terms, err := lightning.DecodeBolt11(req.PaymentRequest)
	if err != nil {
		grpcError(w, http.StatusBadRequest, "invalid payment request")
		return
	}
	if time.Now().After(terms.ExpiresAt()) {
		streamError(w, http.StatusInternalServerError, codeUnknown, "invoice expired. Valid until "+terms.ExpiresAt().String())
		return
	}
	hash := terms.PaymentHash
	n.mu.Lock()
	defer n.mu.Unlock()
	n.sends++
	if _, seen := n.payments[hash]; !seen {
		n.sent = append(n.sent, sentPayment{hash: hash, valueSat: int64(terms.AmountMsat / 1000), created: time.Now()})
	}
	switch n.payments[hash] {
	case "SUCCEEDED":
		streamError(w, http.StatusConflict, codeAlreadyExists, "invoice is already paid")
		return
	case "IN_FLIGHT":
		streamError(w, http.StatusConflict, codeAlreadyExists, "payment is in transition")
		return
	}
	if held := n.held; held != nil {
		// lnd sends nothing until the payment's final state (no in-flight
		// updates), and goes on with it if the caller stops waiting.
		n.payments[hash] = "IN_FLIGHT"
		n.mu.Unlock()
		select {
		case <-held:
		case <-r.Context().Done():
		}
		n.mu.Lock()
		if n.payments[hash] == "IN_FLIGHT" {
			return // the caller stopped waiting
		}
	} else {
		status := "SUCCEEDED"
		if n.fail != "" {
			status = "FAILED"
		}
		n.payments[hash] = status
	}
	status := n.payments[hash]
	if n.drop {
		grpcError(w, http.StatusBadGateway, "bad gateway")
		return
	}
	streamResult(w, n.paymentJSON(hash, status))
}

func (n *Node) track(w http.ResponseWriter, r *http.Request) {
	raw, err := base64.URLEncoding.DecodeString(strings.TrimPrefix(r.URL.Path, "/v2/router/track/"))
	if err != nil || len(raw) != 32 {
		grpcError(w, http.StatusBadRequest, "invalid hash")
		return
	}
	hash := [32]byte(raw)
	n.mu.Lock()
	defer n.mu.Unlock()
	status, ok := n.payments[hash]
	if !ok {
		streamError(w, http.StatusNotFound, codeNotFound, "payment isn't initiated")
		return
	}
	streamResult(w, n.paymentJSON(hash, status))
}

// paymentJSON is an lnrpc.Payment; n.mu is held.
func (n *Node) paymentJSON(hash [32]byte, status string) map[string]any {
	p := map[string]any{"payment_hash": hex.EncodeToString(hash[:]), "status": status, "fee_msat": "1000",
		"payment_preimage": hex.EncodeToString(make([]byte, 32)), "failure_reason": "FAILURE_REASON_NONE"}
	switch status {
	case "SUCCEEDED":
		pre, ok := n.preimages[hash]
		if !ok {
			n.t.Errorf("lndtest: paid %x, which no payee made", hash)
		}
		p["payment_preimage"] = hex.EncodeToString(pre[:])
	case "FAILED":
		p["failure_reason"] = n.fail
	}
	return p
}

// learn tells the node the preimage of a payee's invoice, so paying it can succeed.
func (n *Node) learn(preimage [32]byte) {
	n.mu.Lock()
	n.preimages[sha256.Sum256(preimage[:])] = preimage
	n.mu.Unlock()
}

func mustHash(t Reporter, s string) [32]byte {
	h, ok := parseHex(s)
	if !ok {
		t.Fatalf("lndtest: %q is not a payment hash", s)
	}
	return h
}

func parseHex(s string) ([32]byte, bool) {
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 32 {
		return [32]byte{}, false
	}
	return [32]byte(b), true
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// grpcError answers as lnd's proxy does for a unary call.
func grpcError(w http.ResponseWriter, status int, message string) {
	writeJSON(w, status, map[string]any{"code": 2, "message": message, "details": []any{}})
}

// gRPC status codes lnd's stream errors carry, as real lnd sends them.
const (
	codeUnknown       = 2
	codeNotFound      = 5
	codeAlreadyExists = 6
)

// streamError answers as lnd's proxy does for a stream that fails before
// its first message.
func streamError(w http.ResponseWriter, status, code int, message string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"code": code, "message": message, "details": []any{}}})
}

// streamResult writes each payment as a stream message, one per line.
func streamResult(w http.ResponseWriter, payments ...map[string]any) {
	w.Header().Set("Content-Type", "application/json")
	for _, p := range payments {
		_ = json.NewEncoder(w).Encode(map[string]any{"result": p})
	}
}
