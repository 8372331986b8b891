package main

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/ledger/ledger/workers/rails/ethereum"
)

// usdtConfig is the USDT rail's settings: the xpub, the node and the token
// contract, all of them or none.
type usdtConfig struct {
	XPub          string        // LEDGER_USDT_XPUB: the account's extended public key
	RPCURL        string        // LEDGER_ETH_RPC_URL: an Ethereum node's JSON-RPC endpoint
	Contract      string        // LEDGER_USDT_CONTRACT: the token
	Confirmations int           // LEDGER_ETH_CONFIRMATIONS
	Poll          time.Duration // LEDGER_ETH_POLL
}

func (u usdtConfig) set() bool { return u.XPub != "" || u.RPCURL != "" || u.Contract != "" }

// validateUSDT refuses a USDT rail configured by half, or in sandbox mode
// (whose USDT addresses are its own and whose deposits come through its API).
func (c *config) validateUSDT() error {
	u := &c.USDT
	switch {
	case c.Mode == "sandbox" && u.set():
		return fmt.Errorf("LEDGER_USDT_XPUB, LEDGER_ETH_RPC_URL and LEDGER_USDT_CONTRACT configure production's USDT deposits; the sandbox takes USDT deposits through its API")
	case !u.set():
		return nil
	}
	var missing []string
	for _, s := range []struct{ name, value string }{{"LEDGER_USDT_XPUB", u.XPub}, {"LEDGER_ETH_RPC_URL", u.RPCURL},
		{"LEDGER_USDT_CONTRACT", u.Contract}} {
		if s.value == "" {
			missing = append(missing, s.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the USDT rail is half configured: %s missing", strings.Join(missing, ", "))
	}
	if _, err := ethereum.ParseXPub(u.XPub); err != nil {
		return fmt.Errorf("LEDGER_USDT_XPUB: %w", err)
	}
	if rpc, err := url.Parse(u.RPCURL); err != nil || (rpc.Scheme != "https" && rpc.Scheme != "http") || rpc.Host == "" {
		return fmt.Errorf("LEDGER_ETH_RPC_URL must be an http(s) URL, not %q", u.RPCURL)
	}
	if _, err := ethereum.ParseAddress(u.Contract); err != nil {
		return fmt.Errorf("LEDGER_USDT_CONTRACT %q: %w", u.Contract, err)
	}
	return nil
}

// ethTimeout bounds one call to the Ethereum node; a poll whose call
// times out reads the same blocks at the next.
const ethTimeout = 30 * time.Second

// newUSDT returns the deposit address key and the node client, or nils
// when the rail is not configured.
func newUSDT(cfg config) (*ethereum.XPubKey, *ethereum.RPC, error) {
	u := cfg.USDT
	if !u.set() {
		return nil, nil, nil
	}
	key, err := ethereum.ParseXPub(u.XPub)
	if err != nil {
		return nil, nil, fmt.Errorf("LEDGER_USDT_XPUB: %w", err)
	}
	return &key, ethereum.NewRPC(u.RPCURL, &http.Client{Timeout: ethTimeout}), nil
}
