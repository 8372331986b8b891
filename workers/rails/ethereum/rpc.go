package ethereum

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
)

// RPC is a client of an Ethereum node's JSON-RPC API over HTTP: the few
// methods the USDT watcher reads with.
type RPC struct {
	url    string
	client *http.Client
	id     atomic.Int64
}

// NewRPC returns a client of the node at url.
func NewRPC(url string, client *http.Client) *RPC {
	return &RPC{url: url, client: client}
}

// RPCError is an error the node answered.
type RPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("json-rpc error %d: %s", e.Code, e.Message) }

// Call sends one request and decodes its result into out.
func (c *RPC) Call(ctx context.Context, out any, method string, params ...any) error {
	if params == nil {
		params = []any{}
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.id.Add(1), "method": method, "params": params})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: HTTP %d: %.200s", method, resp.StatusCode, raw)
	}
	var r struct {
		Result json.RawMessage `json:"result"`
		Error  *RPCError       `json:"error"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	if r.Error != nil {
		return fmt.Errorf("%s: %w", method, r.Error)
	}
	if err := json.Unmarshal(r.Result, out); err != nil {
		return fmt.Errorf("%s: result: %w", method, err)
	}
	return nil
}

// quantity is a JSON-RPC QUANTITY: 0x-prefixed hex without leading zeros.
type quantity uint64

func (q *quantity) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	n, err := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 64)
	if err != nil || !strings.HasPrefix(s, "0x") {
		return fmt.Errorf("not a quantity: %q", s)
	}
	*q = quantity(n)
	return nil
}

func hexQuantity(n uint64) string { return "0x" + strconv.FormatUint(n, 16) }

// BlockNumber is the number of the node's latest block.
func (c *RPC) BlockNumber(ctx context.Context) (uint64, error) {
	var n quantity
	err := c.Call(ctx, &n, "eth_blockNumber")
	return uint64(n), err
}

// ChainID is the chain the node follows (EIP-155).
func (c *RPC) ChainID(ctx context.Context) (uint64, error) {
	var n quantity
	err := c.Call(ctx, &n, "eth_chainId")
	return uint64(n), err
}

// Header is what the watcher reads of a block.
type Header struct {
	Number    uint64
	Hash      string // lowercase 0x + 64 hex
	Timestamp uint64 // seconds since 1970
}

// HeaderByNumber returns the canonical block at n.
func (c *RPC) HeaderByNumber(ctx context.Context, n uint64) (Header, error) {
	var b *struct {
		Number    quantity `json:"number"`
		Hash      string   `json:"hash"`
		Timestamp quantity `json:"timestamp"`
	}
	if err := c.Call(ctx, &b, "eth_getBlockByNumber", hexQuantity(n), false); err != nil {
		return Header{}, err
	}
	if b == nil {
		return Header{}, fmt.Errorf("eth_getBlockByNumber: no block %d", n)
	}
	return Header{Number: uint64(b.Number), Hash: strings.ToLower(b.Hash), Timestamp: uint64(b.Timestamp)}, nil
}

// Log is an event log.
type Log struct {
	Address     string   `json:"address"`
	Topics      []string `json:"topics"`
	Data        string   `json:"data"`
	BlockNumber quantity `json:"blockNumber"`
	BlockHash   string   `json:"blockHash"`
	TxHash      string   `json:"transactionHash"`
	LogIndex    quantity `json:"logIndex"`
	Removed     bool     `json:"removed"`
}

// LogFilter is eth_getLogs's filter: Topics[i] lists the values topic i
// may take (nil: any).
type LogFilter struct {
	FromBlock, ToBlock uint64
	Address            string
	Topics             [][]string
}

// Logs returns the logs matching f in its block range, inclusive.
func (c *RPC) Logs(ctx context.Context, f LogFilter) ([]Log, error) {
	topics := make([]any, len(f.Topics))
	for i, t := range f.Topics {
		if t != nil {
			topics[i] = t
		}
	}
	var logs []Log
	err := c.Call(ctx, &logs, "eth_getLogs", map[string]any{"fromBlock": hexQuantity(f.FromBlock),
		"toBlock": hexQuantity(f.ToBlock), "address": f.Address, "topics": topics})
	return logs, err
}

// TransferTopic is topic 0 of an ERC-20 Transfer(address,address,uint256)
// log: the Keccak-256 of that signature.
var TransferTopic = "0x" + fmt.Sprintf("%x", keccak256([]byte("Transfer(address,address,uint256)")))

// addressTopic is an address as an indexed topic: left-padded to 32 bytes.
func addressTopic(addr string) string {
	return "0x" + strings.Repeat("0", 24) + strings.ToLower(strings.TrimPrefix(addr, "0x"))
}

// transfer reads an ERC-20 Transfer log: the recipient and the amount in
// the token's smallest unit.
func (l Log) transfer() (from, to string, value *big.Int, err error) {
	if len(l.Topics) != 3 || !strings.EqualFold(l.Topics[0], TransferTopic) {
		return "", "", nil, errors.New("not an ERC-20 Transfer log")
	}
	f, t := strings.ToLower(l.Topics[1]), strings.ToLower(l.Topics[2])
	data := strings.TrimPrefix(l.Data, "0x")
	if len(f) != 66 || len(t) != 66 || len(data) != 64 {
		return "", "", nil, errors.New("not an ERC-20 Transfer log")
	}
	value, ok := new(big.Int).SetString(data, 16)
	if !ok {
		return "", "", nil, errors.New("a Transfer log's value is not hex")
	}
	return "0x" + f[26:], "0x" + t[26:], value, nil
}
