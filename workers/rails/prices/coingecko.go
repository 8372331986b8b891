package prices

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/ledger/ledger/domain"
	"github.com/shopspring/decimal"
)

// coinGeckoTimeout bounds one fetch, so a hung API fails payments with a
// 503 in seconds rather than holding their requests open.
const coinGeckoTimeout = 5 * time.Second

// CoinGecko is the production Source: the public simple-price API
// (GET /api/v3/simple/price), cached for a TTL so a burst of payments makes
// one request. Concurrent callers on an empty or stale cache share a single
// fetch and its result, error included.
type CoinGecko struct {
	url     string
	apiKey  string
	ttl     time.Duration
	client  *http.Client
	timeout time.Duration
	now     func() time.Time

	mu       sync.Mutex
	cached   domain.BTCPrices // nil until a fetch succeeds
	fetched  time.Time
	inflight *fetch // the fetch callers are waiting on, or nil
}

// fetch is one request to the API; done closes when prices or err is set.
type fetch struct {
	done   chan struct{}
	prices domain.BTCPrices
	err    error
}

// NewCoinGecko reads prices from baseURL (e.g. https://api.coingecko.com),
// sending apiKey as x-cg-pro-api-key when it is not empty, and reuses them
// for ttl (e.g. 30 s; zero or less: every call not sharing a fetch makes
// one). A nil client is http.DefaultClient.
func NewCoinGecko(baseURL, apiKey string, ttl time.Duration, client *http.Client) *CoinGecko {
	if client == nil {
		client = http.DefaultClient
	}
	vs := strings.ToLower(strings.Join(currencies, ","))
	return &CoinGecko{url: strings.TrimRight(baseURL, "/") + "/api/v3/simple/price?ids=bitcoin&vs_currencies=" + vs,
		apiKey: apiKey, ttl: ttl, client: client, timeout: coinGeckoTimeout, now: time.Now}
}

// BTCPrices returns the cached prices while fresh, else the result of a
// fetch (joining one already under way). ctx bounds only this caller's
// wait: the fetch itself runs to its own timeout for everyone sharing it.
func (c *CoinGecko) BTCPrices(ctx context.Context) (domain.BTCPrices, error) {
	c.mu.Lock()
	if c.cached != nil && c.now().Sub(c.fetched) < c.ttl {
		p := maps.Clone(c.cached)
		c.mu.Unlock()
		return p, nil
	}
	f := c.inflight
	if f == nil {
		f = &fetch{done: make(chan struct{})}
		c.inflight = f
		go c.run(context.WithoutCancel(ctx), f)
	}
	c.mu.Unlock()
	select {
	case <-f.done:
		if f.err != nil {
			return nil, f.err
		}
		return maps.Clone(f.prices), nil
	case <-ctx.Done():
		return nil, fmt.Errorf("coingecko: waiting for prices: %w", ctx.Err())
	}
}

// run performs f and caches a success. Failures are not cached: the next
// caller tries again.
func (c *CoinGecko) run(ctx context.Context, f *fetch) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	prices, err := c.get(ctx)
	c.mu.Lock()
	if err == nil {
		c.cached, c.fetched = prices, c.now()
	}
	c.inflight = nil
	c.mu.Unlock()
	f.prices, f.err = prices, err
	close(f.done)
}

// get requests and decodes the prices. Numbers are decoded as json.Number
// and parsed as decimals, so 1850000.123456789 stays exact (no float64).
func (c *CoinGecko) get(ctx context.Context) (domain.BTCPrices, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url, nil)
	if err != nil {
		return nil, fmt.Errorf("coingecko: build request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	if c.apiKey != "" {
		req.Header.Set("x-cg-pro-api-key", c.apiKey)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("coingecko: get prices: %w", err)
	}
	defer resp.Body.Close()
	body := io.LimitReader(resp.Body, 64<<10) // the answer is about 150 bytes
	if resp.StatusCode != http.StatusOK {
		snippet, _ := io.ReadAll(io.LimitReader(body, 512))
		return nil, fmt.Errorf("coingecko: get prices: status %d: %s", resp.StatusCode, snippet)
	}
	var answer struct {
		Bitcoin map[string]json.Number `json:"bitcoin"`
	}
	dec := json.NewDecoder(body)
	dec.UseNumber()
	if err := dec.Decode(&answer); err != nil {
		return nil, fmt.Errorf("coingecko: decode prices: %w", err)
	}
	prices := make(domain.BTCPrices, len(currencies))
	for _, cur := range currencies {
		n, ok := answer.Bitcoin[strings.ToLower(cur)]
		if !ok {
			return nil, fmt.Errorf("coingecko: no bitcoin price in %s", cur)
		}
		p, err := decimal.NewFromString(n.String())
		if err != nil || !p.IsPositive() {
			return nil, fmt.Errorf("coingecko: bitcoin price in %s is %q, not a decimal above zero", cur, n)
		}
		prices[cur] = p
	}
	return prices, nil
}
