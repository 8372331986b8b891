package prices

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const fullAnswer = `{"bitcoin":{"zar":1850000.123456789,"kes":13000000,"ngn":160000000.000000000001,` +
	`"gbp":80000.5,"eur":92000,"usd":1.0000001e5}}`

// fakeCoinGecko serves answer (a JSON body) with status, counting requests
// and recording the last API key header; gate, when not nil, holds each
// answer until it is closed.
type fakeCoinGecko struct {
	status   int
	answer   string
	gate     chan struct{}
	requests atomic.Int32
	key      atomic.Value
}

func (f *fakeCoinGecko) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.requests.Add(1)
	f.key.Store(r.Header.Get("x-cg-pro-api-key"))
	if r.URL.Path != "/api/v3/simple/price" || r.URL.Query().Get("ids") != "bitcoin" ||
		r.URL.Query().Get("vs_currencies") != "zar,kes,ngn,gbp,eur,usd" {
		http.Error(w, "unexpected request "+r.URL.String(), http.StatusBadRequest)
		return
	}
	if f.gate != nil {
		<-f.gate
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(f.status)
	_, _ = w.Write([]byte(f.answer))
}

// newFake starts f and returns a CoinGecko client of it with a 30 s TTL
// and a clock the test moves with *now.
func newFake(t *testing.T, f *fakeCoinGecko, apiKey string) (*CoinGecko, *time.Time) {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	c := NewCoinGecko(srv.URL+"/", apiKey, 30*time.Second, srv.Client())
	now := start
	c.now = func() time.Time { return now }
	return c, &now
}

// newFakeClient is newFake without an API key or a clock to move.
func newFakeClient(t *testing.T, f *fakeCoinGecko) *CoinGecko {
	t.Helper()
	c, _ := newFake(t, f, "")
	return c
}

func TestCoinGeckoDecodesExactly(t *testing.T) {
	t.Parallel()
	f := &fakeCoinGecko{status: http.StatusOK, answer: fullAnswer}
	c, _ := newFake(t, f, "cg-key")
	wantPrices(t, mustPrices(t, c), map[string]string{"ZAR": "1850000.123456789", "KES": "13000000",
		"NGN": "160000000.000000000001", "GBP": "80000.5", "EUR": "92000", "USD": "100000.01"})
	if got := f.key.Load(); got != "cg-key" {
		t.Fatalf("got api key header %q, want cg-key", got)
	}

	g := &fakeCoinGecko{status: http.StatusOK, answer: fullAnswer}
	mustPrices(t, newFakeClient(t, g))
	if got := g.key.Load(); got != "" {
		t.Fatalf("got api key header %q, want none", got)
	}
}

func TestCoinGeckoCaches(t *testing.T) {
	t.Parallel()
	f := &fakeCoinGecko{status: http.StatusOK, answer: fullAnswer}
	c, now := newFake(t, f, "")
	for range 10 {
		p := mustPrices(t, c)
		p["ZAR"] = dec("1") // a caller's copy never reaches the cache
	}
	*now = now.Add(29 * time.Second)
	if p := mustPrices(t, c); f.requests.Load() != 1 || !p["ZAR"].Equal(dec("1850000.123456789")) {
		t.Fatalf("got %d requests and ZAR %s within the TTL, want 1 and the fetched price", f.requests.Load(), p["ZAR"])
	}
	*now = now.Add(time.Second)
	mustPrices(t, c)
	mustPrices(t, c)
	if got := f.requests.Load(); got != 2 {
		t.Fatalf("got %d requests after the TTL, want 2", got)
	}
}

func TestCoinGeckoSharesOneFetch(t *testing.T) {
	t.Parallel()
	f := &fakeCoinGecko{status: http.StatusOK, answer: fullAnswer, gate: make(chan struct{})}
	c := newFakeClient(t, f)
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Go(func() {
			_, err := c.BTCPrices(context.Background())
			errs <- err
		})
	}
	time.Sleep(50 * time.Millisecond) // let callers pile up on the held request
	close(f.gate)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("btc prices: %v", err)
		}
	}
	if got := f.requests.Load(); got != 1 {
		t.Fatalf("got %d requests for 20 concurrent callers, want 1", got)
	}
}

func TestCoinGeckoErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, answer string
		status       int
	}{
		{"missing currency", `{"bitcoin":{"zar":1850000,"kes":13000000,"ngn":160000000,"gbp":80000,"eur":92000}}`, http.StatusOK},
		{"no bitcoin", `{"ethereum":{"usd":3000}}`, http.StatusOK},
		{"zero price", `{"bitcoin":{"zar":0,"kes":13000000,"ngn":160000000,"gbp":80000,"eur":92000,"usd":100000}}`, http.StatusOK},
		{"non-numeric price", `{"bitcoin":{"zar":"n/a","kes":13000000,"ngn":160000000,"gbp":80000,"eur":92000,"usd":100000}}`, http.StatusOK},
		{"malformed json", `{"bitcoin":{"zar":1850000,`, http.StatusOK},
		{"not json", `<html>rate limited</html>`, http.StatusOK},
		{"rate limited", `{"status":{"error_code":429}}`, http.StatusTooManyRequests},
		{"server error", fullAnswer, http.StatusInternalServerError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := &fakeCoinGecko{status: tc.status, answer: tc.answer}
			c := newFakeClient(t, f)
			for range 2 {
				if p, err := c.BTCPrices(context.Background()); err == nil {
					t.Fatalf("got %v, want an error", p)
				}
			}
			if got := f.requests.Load(); got != 2 {
				t.Fatalf("got %d requests for 2 calls, want 2: failures are not cached", got)
			}
		})
	}
}

func TestCoinGeckoTimeouts(t *testing.T) {
	t.Parallel()
	f := &fakeCoinGecko{status: http.StatusOK, answer: fullAnswer, gate: make(chan struct{})}
	c := newFakeClient(t, f)
	t.Cleanup(func() { close(f.gate) }) // before the server closes: Cleanup runs last-in first-out
	c.timeout = 50 * time.Millisecond
	if _, err := c.BTCPrices(context.Background()); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v from a hung API, want the fetch timeout", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.BTCPrices(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v with a cancelled context, want context.Canceled", err)
	}
}
