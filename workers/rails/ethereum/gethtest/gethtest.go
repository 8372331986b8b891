// Package gethtest runs a private Ethereum chain, go-ethereum's geth in
// --dev mode on loopback, for the USDT watcher's tests: a token deployed
// from committed bytecode (testdata/token.asm), transfers, blocks mined on
// demand and reorganisations.
//
// geth is built once by .ci/geth into $LEDGER_CACHE_DIR/bin (default
// $HOME/.cache/ledger/bin). Without it a test skips, saying how to build
// it, except under CI=true, where it fails.
package gethtest

import (
	"context"
	_ "embed"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ledger/ledger/eventstore/testenv"
	"github.com/ledger/ledger/workers/rails/ethereum"
)

//go:embed testdata/token.hex
var tokenHex string

// Binary is geth's path in the cache directory, or why it cannot be used.
func Binary(t testing.TB) string {
	t.Helper()
	return testenv.CachedBinaries(t, ".ci/geth", "geth")[0]
}

// Chain is a running geth --dev: one block per transaction, mined at once.
type Chain struct {
	URL     string // JSON-RPC over HTTP
	Account string // the dev account: funded, unlocked, the token's holder
	rpc     *ethereum.RPC
}

// Start runs geth --dev until the test ends.
func Start(t *testing.T) *Chain {
	t.Helper()
	bin := Binary(t)
	dir := t.TempDir()
	port, authPort := testenv.FreePort(t), testenv.FreePort(t)
	// --dev.period 0 mines a block for each transaction as it arrives.
	cmd := exec.Command(bin, "--dev", "--dev.period", "0", "--datadir", dir, "--ipcdisable", "--nodiscover", "--maxpeers", "0",
		"--port", "0", "--authrpc.port", strconv.Itoa(authPort), "--http", "--http.addr", "127.0.0.1",
		"--http.port", strconv.Itoa(port), "--http.api", "eth,net,web3,debug", "--verbosity", "2")
	logFile, err := os.Create(filepath.Join(dir, "geth.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = logFile.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logFile.Name())
			t.Logf("geth log:\n%s", b)
		}
	})
	c := &Chain{URL: fmt.Sprintf("http://127.0.0.1:%d", port)}
	c.rpc = ethereum.NewRPC(c.URL, &http.Client{Timeout: 10 * time.Second})
	deadline := time.Now().Add(30 * time.Second)
	for {
		var accounts []string
		err := c.rpc.Call(context.Background(), &accounts, "eth_accounts")
		if err == nil && len(accounts) > 0 {
			c.Account = accounts[0]
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("geth --dev did not answer at %s: %v", c.URL, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Receipt is what the tests read of a mined transaction.
type Receipt struct {
	Status          string `json:"status"`
	BlockNumber     string `json:"blockNumber"`
	ContractAddress string `json:"contractAddress"`
}

// Block is the number of the block the transaction was mined in.
func (r Receipt) Block() uint64 {
	n, _ := strconv.ParseUint(strings.TrimPrefix(r.BlockNumber, "0x"), 16, 64)
	return n
}

// send sends a transaction from the dev account and waits until it is mined.
func (c *Chain) send(t *testing.T, tx map[string]string) Receipt {
	t.Helper()
	tx["from"], tx["gas"] = c.Account, "0x100000"
	ctx := context.Background()
	var hash string
	if err := c.rpc.Call(ctx, &hash, "eth_sendTransaction", tx); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var r *Receipt
		// A fresh node answers an error until it has indexed its few blocks.
		err := c.rpc.Call(ctx, &r, "eth_getTransactionReceipt", hash)
		if err != nil && !strings.Contains(err.Error(), "indexing is in progress") {
			t.Fatal(err)
		}
		if r != nil {
			if r.Status != "0x1" {
				t.Fatalf("transaction %s failed: %+v", hash, *r)
			}
			return *r
		}
		if time.Now().After(deadline) {
			t.Fatalf("transaction %s was not mined", hash)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// DeployToken deploys the test token, the dev account holding its supply
// (1,000,000 tokens of 6 decimals), and returns its address.
func (c *Chain) DeployToken(t *testing.T) string {
	t.Helper()
	r := c.send(t, map[string]string{"data": "0x" + strings.TrimSpace(tokenHex)})
	return r.ContractAddress
}

// Transfer sends amount of the token's smallest unit to to and returns
// the block it was mined in.
func (c *Chain) Transfer(t *testing.T, token, to string, amount int64) uint64 {
	t.Helper()
	data := fmt.Sprintf("0xa9059cbb%064s%064x", strings.ToLower(strings.TrimPrefix(to, "0x")), big.NewInt(amount))
	return c.send(t, map[string]string{"to": token, "data": data}).Block()
}

// Mine mines n blocks (a transaction to itself in each).
func (c *Chain) Mine(t *testing.T, n int) {
	t.Helper()
	for range n {
		c.send(t, map[string]string{"to": c.Account, "value": "0x0"})
	}
}

// Head is the latest block's number.
func (c *Chain) Head(t *testing.T) uint64 {
	t.Helper()
	n, err := c.rpc.BlockNumber(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Rewind makes block n the head, dropping the blocks after it and their
// transactions: a reorganisation, as a competing chain would cause.
func (c *Chain) Rewind(t *testing.T, n uint64) {
	t.Helper()
	var out any
	if err := c.rpc.Call(context.Background(), &out, "debug_setHead", "0x"+strconv.FormatUint(n, 16)); err != nil {
		t.Fatal(err)
	}
	if head := c.Head(t); head != n {
		t.Fatalf("rewound to %d: head is %d", n, head)
	}
}
