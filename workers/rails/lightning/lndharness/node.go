package lndharness

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ledger/ledger/eventstore/testenv"
	"github.com/ledger/ledger/workers/rails/lightning"
)

// AdapterPermissions are what the LND adapter's macaroon is baked for, as
// the README's "Going live" section tells the operator to bake it.
var AdapterPermissions = []string{"invoices:read", "invoices:write", "offchain:read", "offchain:write"}

// Node is one running lnd.
type Node struct {
	Name    string
	RESTURL string // https://127.0.0.1:port, lnd's REST proxy

	net     *Network
	t       *testing.T
	dir     string
	rpcAddr string
	p2pAddr string
	proc    *process
}

func (n *Network) startNode(name string) *Node {
	n.t.Helper()
	dir := filepath.Join(n.dir, name)
	node := &Node{Name: name, net: n, t: n.t, dir: dir,
		RESTURL: "https://127.0.0.1:" + strconv.Itoa(testenv.FreePort(n.t)),
		rpcAddr: "127.0.0.1:" + strconv.Itoa(testenv.FreePort(n.t)),
		p2pAddr: "127.0.0.1:" + strconv.Itoa(testenv.FreePort(n.t))}
	node.start()
	return node
}

// start runs lnd in the node's directory: a new wallet the first time, the
// same one (unlocked with lnd's default password) after a stop.
func (node *Node) start() {
	node.t.Helper()
	n := node.net
	node.proc = start(n.t, node.dir, n.bin.LND, "lnd",
		"--lnddir="+node.dir, "--noseedbackup", "--alias="+node.Name,
		"--bitcoin.regtest", "--bitcoin.node=btcd",
		"--btcd.rpchost=127.0.0.1:"+strconv.Itoa(n.rpcPort), "--btcd.rpcuser="+rpcUser, "--btcd.rpcpass="+rpcPass,
		"--btcd.rpccert="+n.btcdCert(),
		"--listen="+node.p2pAddr, "--rpclisten="+node.rpcAddr, "--restlisten="+strings.TrimPrefix(node.RESTURL, "https://"),
		// No DNS seeds on a private chain; gossip every 50ms, not 90s.
		"--nobootstrap", "--trickledelay=50", "--debuglevel=info",
		// The two channels, one each way, are opened before either confirms.
		"--maxpendingchannels=2")
}

func (node *Node) stop() { node.proc.stop() }

// lncli runs an lncli command against the node with its admin macaroon and
// decodes its JSON output into out (nil: discard it).
func (node *Node) lncli(out any, args ...string) {
	node.t.Helper()
	b, err := node.tryLncli(args...)
	if err != nil {
		node.t.Fatal(err)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			node.t.Fatalf("lncli %s: %v in %s", args[0], err, b)
		}
	}
}

func (node *Node) tryLncli(args ...string) ([]byte, error) {
	ctx, cancel := deadlineCtx()
	defer cancel()
	base := []string{"--lnddir=" + node.dir, "--network=regtest", "--rpcserver=" + node.rpcAddr}
	cmd := exec.CommandContext(ctx, node.net.bin.LNCLI, append(base, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%s: lncli %s: %v: %s %s", node.Name, strings.Join(args, " "), err, trimOutput(out), trimOutput(stderr.Bytes()))
	}
	return out, nil
}

type info struct {
	PubKey      string `json:"identity_pubkey"`
	BlockHeight int64  `json:"block_height"`
	Synced      bool   `json:"synced_to_chain"`
}

func (node *Node) info() (info, error) {
	var i info
	b, err := node.tryLncli("getinfo")
	if err != nil {
		return i, err
	}
	return i, json.Unmarshal(b, &i)
}

func (node *Node) waitSynced() {
	node.t.Helper()
	// A new wallet takes lnd a while: scrypt, then a first sync.
	waitFor(node.t, 2*time.Minute, node.Name+" synced to chain", func() error {
		i, err := node.info()
		if err == nil && !i.Synced {
			err = errors.New("not synced")
		}
		return err
	})
}

func (node *Node) waitHeight(height int64) {
	node.t.Helper()
	waitFor(node.t, time.Minute, fmt.Sprintf("%s at block %d", node.Name, height), func() error {
		i, err := node.info()
		if err == nil && (i.BlockHeight < height || !i.Synced) {
			err = fmt.Errorf("at block %d, synced %v", i.BlockHeight, i.Synced)
		}
		return err
	})
}

// PubKey is the node's identity key (hex).
func (node *Node) PubKey() string {
	node.t.Helper()
	i, err := node.info()
	if err != nil {
		node.t.Fatal(err)
	}
	return i.PubKey
}

// NewAddress is a fresh P2WKH address of the node's wallet.
func (node *Node) NewAddress() string {
	node.t.Helper()
	var a struct {
		Address string `json:"address"`
	}
	node.lncli(&a, "newaddress", "p2wkh")
	return a.Address
}

func (node *Node) waitBalance(sats int64) {
	node.t.Helper()
	waitFor(node.t, time.Minute, fmt.Sprintf("%s's confirmed balance of %d sats", node.Name, sats), func() error {
		b, err := node.tryLncli("walletbalance")
		if err != nil {
			return err
		}
		var w struct {
			Confirmed string `json:"confirmed_balance"`
		}
		if err := json.Unmarshal(b, &w); err != nil {
			return err
		}
		if got, _ := strconv.ParseInt(w.Confirmed, 10, 64); got < sats {
			return fmt.Errorf("confirmed balance %d", got)
		}
		return nil
	})
}

func (node *Node) openChannel(to *Node) {
	node.t.Helper()
	node.lncli(nil, "openchannel", "--node_key", to.PubKey(), "--local_amt", strconv.Itoa(ChannelSats))
}

func (node *Node) waitActiveChannels(count int) {
	node.t.Helper()
	waitFor(node.t, time.Minute, fmt.Sprintf("%s's %d active channels", node.Name, count), func() error {
		b, err := node.tryLncli("listchannels", "--active_only")
		if err != nil {
			return err
		}
		var c struct {
			Channels []json.RawMessage `json:"channels"`
		}
		if err := json.Unmarshal(b, &c); err != nil {
			return err
		}
		if len(c.Channels) < count {
			return fmt.Errorf("%d active", len(c.Channels))
		}
		return nil
	})
}

// waitCanPay pays a 1,000-sat invoice of to's, retrying while lnd finds no
// usable channel: lnd lets a failed payment's hash be paid again.
func (node *Node) waitCanPay(to *Node) {
	node.t.Helper()
	pr := to.AddInvoice(1_000, time.Hour)
	waitFor(node.t, time.Minute, node.Name+" paying "+to.Name, func() error {
		p, err := node.Pay(pr)
		if err == nil && p.Status != "SUCCEEDED" {
			err = fmt.Errorf("payment %s: %s", p.Status, p.FailureReason)
		}
		return err
	})
}

// Client trusts only the node's tls.cert, as production's client does.
func (node *Node) Client() *http.Client {
	node.t.Helper()
	pem, err := os.ReadFile(filepath.Join(node.dir, "tls.cert"))
	if err != nil {
		node.t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		node.t.Fatal("lndharness: no certificate in tls.cert")
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
}

// TLSCertPath is the node's tls.cert.
func (node *Node) TLSCertPath() string { return filepath.Join(node.dir, "tls.cert") }

// BakeMacaroon returns a macaroon (binary) for exactly permissions.
func (node *Node) BakeMacaroon(permissions ...string) []byte {
	node.t.Helper()
	path := filepath.Join(node.dir, fmt.Sprintf("baked-%d.macaroon", time.Now().UnixNano()))
	node.lncli(nil, append([]string{"bakemacaroon", "--save_to", path}, permissions...)...)
	b, err := os.ReadFile(path)
	if err != nil {
		node.t.Fatal(err)
	}
	return b
}

// LND is the adapter talking to this node with a macaroon baked for
// AdapterPermissions only.
func (node *Node) LND(preimageKey []byte) *lightning.LND {
	node.t.Helper()
	c, err := lightning.NewLND(node.RESTURL, node.BakeMacaroon(AdapterPermissions...), preimageKey, node.Client())
	if err != nil {
		node.t.Fatal(err)
	}
	return c
}

// AddInvoice makes an invoice of the node's for sats, open for expiry, and
// returns its payment request.
func (node *Node) AddInvoice(sats int64, expiry time.Duration) string {
	node.t.Helper()
	var inv struct {
		PaymentRequest string `json:"payment_request"`
	}
	node.lncli(&inv, "addinvoice", "--amt", strconv.FormatInt(sats, 10), "--expiry", strconv.FormatInt(int64(expiry/time.Second), 10))
	return inv.PaymentRequest
}

// Payment is the last state lncli reported of a payment this node made.
type Payment struct {
	Status        string `json:"status"`
	FailureReason string `json:"failure_reason"`
	FeeMsat       string `json:"fee_msat"`
}

// Pay pays paymentRequest, as a payer's wallet would, and returns the
// outcome, or the error lnd refused the payment with.
func (node *Node) Pay(paymentRequest string) (Payment, error) {
	node.t.Helper()
	out, err := node.tryLncli("payinvoice", "--force", "--json", "--pay_req", paymentRequest)
	if err != nil {
		return Payment{}, err
	}
	// --json prints one object per update; the last is the outcome.
	var p Payment
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		if err := dec.Decode(&p); err != nil {
			return Payment{}, fmt.Errorf("lncli payinvoice: %v in %s", err, out)
		}
	}
	return p, nil
}

// Received is the state of this node's invoice with paymentHash (hex)
// and what was paid to it.
func (node *Node) Received(paymentHash string) (state string, paidSats int64) {
	node.t.Helper()
	var inv struct {
		State      string `json:"state"`
		AmtPaidSat string `json:"amt_paid_sat"`
	}
	node.lncli(&inv, "lookupinvoice", paymentHash)
	paid, _ := strconv.ParseInt(inv.AmtPaidSat, 10, 64)
	return inv.State, paid
}

// Payments counts this node's payments to paymentHash (hex) by status.
func (node *Node) Payments(paymentHash string) map[string]int {
	node.t.Helper()
	var list struct {
		Payments []struct {
			Hash   string `json:"payment_hash"`
			Status string `json:"status"`
		} `json:"payments"`
	}
	node.lncli(&list, "listpayments", "--include_incomplete")
	counts := map[string]int{}
	for _, p := range list.Payments {
		if p.Hash == paymentHash {
			counts[p.Status]++
		}
	}
	return counts
}
