// Package lndharness runs a private Lightning network for the LND
// adapter's tests against real software: btcd on regtest and two lnd
// nodes, the service's (Service) and a payer/payee (Peer), with a channel
// opened each way, all on loopback ports under the test's temporary
// directory.
//
// btcd, lnd and lncli are built once by .ci/lnd into $LEDGER_CACHE_DIR/bin
// (default $HOME/.cache/ledger/bin). Without them a test skips, saying how
// to build them, except under CI=true, where it fails.
package lndharness

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
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
)

// ChannelSats is the capacity of each of the two channels. The opener
// holds it all, less the commitment fee and reserve, so each side can send
// a little under this and receive a little under this.
const ChannelSats = 1_000_000

// burnAddress is the P2WPKH address of the all-zero key hash on regtest:
// btcd mines its first block there, before any lnd wallet has an address,
// and nobody can spend it.
const burnAddress = "bcrt1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqdku202"

const rpcUser, rpcPass = "harness", "harness"

// Binaries are the paths of btcd, lnd and lncli in the cache directory.
type Binaries struct{ Btcd, LND, LNCLI string }

// FindBinaries returns the cached binaries, or skips (fails under CI=true)
// when one is missing.
func FindBinaries(t testing.TB) Binaries {
	t.Helper()
	p := testenv.CachedBinaries(t, ".ci/lnd", "btcd", "lnd", "lncli")
	return Binaries{Btcd: p[0], LND: p[1], LNCLI: p[2]}
}

// Network is a regtest chain and two funded lnd nodes with a channel each way.
type Network struct {
	t       *testing.T
	bin     Binaries
	dir     string
	btcd    *process
	rpcPort int
	p2pPort int
	rpc     *http.Client

	Service *Node // the node ledgerd's LEDGER_LND_* point at
	Peer    *Node // the payer of deposits and payee of payouts
}

// Start runs the network until the test ends. Most of its time goes to
// lnd creating its wallets and starting (once more for the service's).
func Start(t *testing.T) *Network {
	t.Helper()
	n := &Network{t: t, bin: FindBinaries(t), dir: t.TempDir(), rpcPort: testenv.FreePort(t), p2pPort: testenv.FreePort(t)}
	n.startBtcd(burnAddress)
	// lnd waits for its chain to look current (a tip under two hours old)
	// before it answers: regtest's genesis block is from 2011.
	n.Mine(1)
	n.Service = n.startNode("service")
	n.Service.waitSynced()

	// btcd mines to one address, fixed when it starts: restart it mining
	// to the service's wallet. lnd does not come back whole from its
	// backend's restart (it stays unsynced), so it restarts too.
	addr := n.Service.NewAddress()
	n.Service.stop()
	n.btcd.stop()
	n.startBtcd(addr)
	// A block mined now gives the restarted wallet a tip beyond the one it
	// stopped at.
	var hashes []string
	n.btcdCall(&hashes, "generate", 1)
	n.Service.start()
	n.Peer = n.startNode("peer")
	n.Service.waitSynced()
	n.Peer.waitSynced()
	// btcd's regtest activates segwit, which every lnd transaction needs,
	// through three 144-block signalling periods; by then a hundred
	// coinbases have matured too.
	n.Mine(450)
	n.Service.waitBalance(ChannelSats * 3)
	n.Service.lncli(nil, "sendcoins", "--addr", n.Peer.NewAddress(), "--amt", strconv.Itoa(ChannelSats*2))
	n.Mine(6)
	n.Peer.waitBalance(ChannelSats * 2)

	n.Peer.lncli(nil, "connect", n.Service.PubKey()+"@"+n.Service.p2pAddr)
	n.Service.openChannel(n.Peer)
	n.Peer.openChannel(n.Service)
	n.Mine(6)
	n.Service.waitActiveChannels(2)
	n.Peer.waitActiveChannels(2)
	// A channel listed active may not forward yet (its links still
	// exchanging channel_ready): pay a little each way until it does.
	n.Service.waitCanPay(n.Peer)
	n.Peer.waitCanPay(n.Service)
	return n
}

// Mine mines count blocks and waits until both nodes have seen them.
func (n *Network) Mine(count int) {
	n.t.Helper()
	var hashes []string
	n.btcdCall(&hashes, "generate", count)
	var height int64
	n.btcdCall(&height, "getblockcount")
	for _, node := range []*Node{n.Service, n.Peer} {
		if node != nil {
			node.waitHeight(height)
		}
	}
}

func (n *Network) startBtcd(miningAddr string) {
	n.t.Helper()
	n.btcd = start(n.t, filepath.Join(n.dir, "btcd"), n.bin.Btcd, "btcd",
		"--regtest", "--datadir="+filepath.Join(n.dir, "btcd", "data"), "--logdir="+filepath.Join(n.dir, "btcd", "logs"),
		"--rpcuser="+rpcUser, "--rpcpass="+rpcPass,
		"--rpclisten=127.0.0.1:"+strconv.Itoa(n.rpcPort), "--listen=127.0.0.1:"+strconv.Itoa(n.p2pPort),
		"--rpccert="+n.btcdCert(), "--rpckey="+filepath.Join(n.dir, "btcd", "rpc.key"),
		"--txindex", "--miningaddr="+miningAddr, "--debuglevel=info")
	// btcd writes its RPC certificate as it starts.
	waitFor(n.t, 30*time.Second, "btcd's RPC", func() error {
		pem, err := os.ReadFile(n.btcdCert())
		if err != nil {
			return err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return fmt.Errorf("no certificate in %s yet", n.btcdCert())
		}
		n.rpc = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
		var count int64
		return n.tryBtcdCall(&count, "getblockcount")
	})
}

func (n *Network) btcdCert() string { return filepath.Join(n.dir, "btcd", "rpc.cert") }

func (n *Network) btcdCall(out any, method string, params ...any) {
	n.t.Helper()
	if err := n.tryBtcdCall(out, method, params...); err != nil {
		n.t.Fatal(err)
	}
}

func (n *Network) tryBtcdCall(out any, method string, params ...any) error {
	if params == nil {
		params = []any{}
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "1.0", "id": 1, "method": method, "params": params})
	if err != nil {
		return err
	}
	req, err := http.NewRequest(http.MethodPost, "https://127.0.0.1:"+strconv.Itoa(n.rpcPort), bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.SetBasicAuth(rpcUser, rpcPass)
	resp, err := n.rpc.Do(req)
	if err != nil {
		return fmt.Errorf("btcd %s: %w", method, err)
	}
	defer resp.Body.Close()
	var answer struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil {
		return fmt.Errorf("btcd %s: %s: %w", method, resp.Status, err)
	}
	if answer.Error != nil {
		return fmt.Errorf("btcd %s: %s", method, answer.Error.Message)
	}
	return json.Unmarshal(answer.Result, out)
}

// process is a child process whose log the test prints when it fails.
type process struct {
	t    *testing.T
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

func start(t *testing.T, dir, bin, name string, args ...string) *process {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, name+".out")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{t: t, name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); _ = logFile.Close(); close(p.done) }()
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			if len(b) > 8000 {
				b = b[len(b)-8000:]
			}
			t.Logf("%s output (tail):\n%s", name, b)
		}
	})
	return p
}

// stop interrupts the process, as its operator would, and waits for it;
// a process that ignores that for ten seconds is killed.
func (p *process) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// waitFor calls try until it succeeds or timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, try func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := try()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s: %v", timeout, what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// deadlineCtx bounds one lncli call.
func deadlineCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 2*time.Minute)
}

func trimOutput(b []byte) string { return strings.TrimSpace(string(b)) }
