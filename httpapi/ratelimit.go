package httpapi

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/httpapi/clientkey"
)

// RateLimit is a token bucket: Rate requests per second on average and up
// to Burst at once. The zero value limits nothing.
type RateLimit struct {
	Rate  rate.Limit
	Burst int
}

// limiters holds one token bucket per key: an API key, or a client IP.
// Buckets live in this process only, so N processes behind a load balancer
// admit N times the limit; a shared count would cost a Postgres or NATS
// round trip on every request, which the append path cannot afford.
type limiters struct {
	limit RateLimit
	idle  time.Duration // a bucket unused this long is full again

	mu        sync.Mutex
	buckets   map[string]*bucket
	lastSweep time.Time
}

type bucket struct {
	lim  *rate.Limiter
	used time.Time
}

// newLimiters returns the buckets of limit, or nil (which admits everything)
// when limit is the zero value.
func newLimiters(limit RateLimit) *limiters {
	if limit.Rate <= 0 || limit.Burst <= 0 {
		return nil
	}
	idle := time.Duration(float64(limit.Burst) / float64(limit.Rate) * float64(time.Second))
	return &limiters{limit: limit, idle: idle, buckets: map[string]*bucket{}}
}

// take spends one token of key's bucket at now. It returns zero when the
// request may go ahead, else how long until a token is there again.
func (l *limiters) take(key string, now time.Time) time.Duration {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(now)
	b, ok := l.buckets[key]
	if !ok {
		b = &bucket{lim: rate.NewLimiter(l.limit.Rate, l.limit.Burst)}
		l.buckets[key] = b
	}
	b.used = now
	if b.lim.AllowN(now, 1) {
		return 0
	}
	missing := 1 - b.lim.TokensAt(now)
	return time.Duration(missing / float64(l.limit.Rate) * float64(time.Second))
}

// sweep forgets buckets idle long enough to be full again: a new bucket is
// the same, so forgetting them changes no answer and the map holds only
// the keys of the last moments, however many keys come and go.
func (l *limiters) sweep(now time.Time) {
	if now.Sub(l.lastSweep) < l.idle {
		return
	}
	for key, b := range l.buckets {
		if now.Sub(b.used) >= l.idle {
			delete(l.buckets, key)
		}
	}
	l.lastSweep = now
}

var errRateLimited = domain.Errorf(domain.Unavailable, "rate_limited", "too many requests; retry after the number of seconds in Retry-After")

// rateLimited answers a request over its limit: Retry-After in whole
// seconds, at least 1 (RFC 9110 §10.2.3), and 429 problem+json.
func rateLimited(w http.ResponseWriter, wait time.Duration) error {
	secs := max(1, int(math.Ceil(wait.Seconds())))
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	return errRateLimited
}

// limitByIP applies the per-client limit of POST /token. The client is
// the connection's peer, an IPv6 one by its /64, as for the dashboard's
// sign-in lock-out (clientkey.Of): behind a proxy every client shares the
// proxy's bucket.
func (s *Server) limitByIP(next http.Handler) http.Handler {
	return s.route(func(w http.ResponseWriter, r *http.Request) error {
		if wait := s.tokenIPLimits.take(clientkey.Of(r), s.now()); wait > 0 {
			return rateLimited(w, wait)
		}
		next.ServeHTTP(w, r)
		return nil
	})
}
