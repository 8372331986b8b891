package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
)

// chaosClient is how a careful partner calls a payments API through a
// load balancer: every write carries an Idempotency-Key, and a request
// that got no answer, a 503 or any 5xx is sent again with the same key to
// the next instance until it gets a definite answer or its patience ends.
// Only a 2xx counts as acknowledged: that is what the scenario then
// expects to find.
type chaosClient struct {
	http     *http.Client
	urls     []string
	next     atomic.Uint64
	patience time.Duration // how long one request keeps being retried

	mu      sync.Mutex
	answers chaosAnswers
	writes  []time.Time // when each write was acknowledged, in order: the write pauses
}

// chaosAnswers counts what the cluster answered, attempt by attempt.
type chaosAnswers struct {
	Acknowledged int `json:"acknowledged"` // 2xx
	ClientErrors int `json:"clientErrors"` // 4xx (a legitimate refusal: not acknowledged)
	Unavailable  int `json:"unavailable"`  // 503 problem+json with Retry-After: the answer expected while a dependency is down
	// ServerErrors are any other 5xx, or a 503 that is not problem+json with
	// Retry-After: the scenario fails on any.
	ServerErrors int      `json:"serverErrors"`
	NoAnswer     int      `json:"noAnswer"`           // connection refused or cut: the instance was down
	RateLimited  int      `json:"rateLimited"`        // 429: over the API key\'s rate, retried after Retry-After
	Replayed     int      `json:"replayed"`           // answers with Idempotent-Replayed: true
	GaveUp       int      `json:"gaveUp"`             // requests that never got a definite answer
	Examples     []string `json:"examples,omitempty"` // the first few server errors, verbatim
}

// chaosAnswer is a definite answer.
type chaosAnswer struct {
	Status int
	Body   []byte
}

// do sends the request until it is answered with a status below 500,
// other than 429 (retried after its Retry-After) and a 409 for a key still
// in flight (retried too), and returns that answer. Writes get a fresh Idempotency-Key shared by all their attempts.
func (c *chaosClient) do(ctx context.Context, method, path, token string, body []byte) (chaosAnswer, error) {
	key := ""
	if method != http.MethodGet {
		key = uuid.NewString()
	}
	deadline := time.Now().Add(c.patience)
	unanswered := 0 // attempts in a row that got no answer at all
	for attempt := 0; ; attempt++ {
		base := c.urls[int(c.next.Add(1))%len(c.urls)]
		ans, retry, wait, err := c.once(ctx, method, base+path, token, key, body)
		if err != nil {
			return chaosAnswer{}, err
		}
		if !retry {
			return ans, nil
		}
		if ans.Status == 0 {
			unanswered++
		} else {
			unanswered = 0
		}
		if unanswered > 0 && unanswered < len(c.urls) {
			// An instance that does not answer (killed, or gone for good)
			// is skipped at once, as a load balancer would: waiting before
			// the next instance would make every request that reaches an
			// instance gone for good sleep first, and a long run's
			// verification would spend most of its time asleep.
			continue
		}
		if time.Now().After(deadline) {
			c.count(func(a *chaosAnswers) { a.GaveUp++ })
			return chaosAnswer{}, fmt.Errorf("%s %s: no definite answer within %v", method, path, c.patience)
		}
		select {
		case <-ctx.Done():
			return chaosAnswer{}, ctx.Err()
		case <-time.After(wait):
		}
	}
}

// once makes one attempt and says whether to retry, after how long. A
// request without an answer is an error once ctx has ended (the load
// stopped): never a zero answer, which a caller checking only for a status
// of 300 or more would take for a 2xx.
func (c *chaosClient) once(ctx context.Context, method, url, token, key string, body []byte) (chaosAnswer, bool, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return chaosAnswer{}, false, 0, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	noAnswer := func() (chaosAnswer, bool, time.Duration, error) {
		c.count(func(a *chaosAnswers) { a.NoAnswer++ })
		if err := ctx.Err(); err != nil {
			return chaosAnswer{}, false, 0, err
		}
		return chaosAnswer{}, true, 100 * time.Millisecond, nil
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return noAnswer()
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return noAnswer()
	}
	ans := chaosAnswer{Status: resp.StatusCode, Body: b}
	switch {
	case resp.StatusCode == http.StatusServiceUnavailable && isProblem(resp) && resp.Header.Get("Retry-After") != "":
		c.count(func(a *chaosAnswers) { a.Unavailable++ })
		return ans, true, retryAfter(resp), nil
	case resp.StatusCode >= 500:
		c.count(func(a *chaosAnswers) {
			a.ServerErrors++
			if len(a.Examples) < 5 {
				a.Examples = append(a.Examples, fmt.Sprintf("%s %s: %d %s", method, req.URL.Path, resp.StatusCode, bytes.TrimSpace(b)))
			}
		})
		return ans, true, 200 * time.Millisecond, nil
	case resp.StatusCode == http.StatusTooManyRequests:
		c.count(func(a *chaosAnswers) { a.RateLimited++ })
		return ans, true, retryAfter(resp), nil
	case resp.StatusCode == http.StatusConflict && bytes.Contains(b, []byte("idempotency_key_in_flight")):
		return ans, true, 100 * time.Millisecond, nil
	case resp.StatusCode >= 400:
		c.count(func(a *chaosAnswers) { a.ClientErrors++ })
	default:
		c.count(func(a *chaosAnswers) {
			a.Acknowledged++
			if resp.Header.Get("Idempotent-Replayed") == "true" {
				a.Replayed++
			}
			if method != http.MethodGet {
				c.writes = append(c.writes, time.Now())
			}
		})
	}
	return ans, false, 0, nil
}

func (c *chaosClient) count(f func(*chaosAnswers)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f(&c.answers)
}

func (c *chaosClient) snapshot() chaosAnswers {
	c.mu.Lock()
	defer c.mu.Unlock()
	a := c.answers
	a.Examples = append([]string(nil), c.answers.Examples...)
	return a
}

// writePause is the longest time without an acknowledged write among the
// gaps that end between from and to: around a fault at from, how long no
// partner could write.
func (c *chaosClient) writePause(from, to time.Time) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return longestGap(c.writes, from, to)
}

// longestGap is the longest gap between consecutive times (ascending)
// whose end falls in [from, to].
func longestGap(times []time.Time, from, to time.Time) time.Duration {
	var longest time.Duration
	for i := 1; i < len(times); i++ {
		if end := times[i]; !end.Before(from) && !end.After(to) {
			longest = max(longest, end.Sub(times[i-1]))
		}
	}
	return longest
}

// isProblem says whether resp is RFC 9457 problem+json.
func isProblem(resp *http.Response) bool {
	mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return err == nil && mt == "application/problem+json"
}

// retryAfter reads Retry-After in seconds, bounded to [100 ms, 2 s] so the
// scenario keeps probing.
func retryAfter(resp *http.Response) time.Duration {
	s, err := strconv.Atoi(resp.Header.Get("Retry-After"))
	if err != nil {
		return time.Second
	}
	return min(max(time.Duration(s)*time.Second, 100*time.Millisecond), 2*time.Second)
}

// errStatus is a definite answer the caller did not want.
func errStatus(what string, a chaosAnswer) error {
	return errors.New(what + ": " + strconv.Itoa(a.Status) + " " + string(bytes.TrimSpace(a.Body)))
}
