package webhooks

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"
)

const (
	// DefaultTimeout is the per-attempt limit of contract §8, used when
	// NewClient is given none.
	DefaultTimeout = 10 * time.Second
	// maxResponse bounds what is read of an answer (headers, and body before it
	// is dropped): receivers owe us a status code, not a payload.
	maxResponse = 64 << 10
	userAgent   = "ledger-webhooks/1 (Standard Webhooks)"
)

// Attempt is the outcome of one delivery, as GET /payments/{id}/webhooks shows it.
type Attempt struct {
	StatusCode int           // 0 when no HTTP answer came
	Duration   time.Duration // from the call to the end of the answer (or the failure)
	Err        string        // "" on a 2xx, else the Failure class of why the attempt failed
	Delivered  bool          // a 2xx: never send this message again
}

// maxIdleConns bounds the idle connections a Client keeps, all receivers
// together.
const maxIdleConns = 64

// Client posts signed webhooks. It is safe for concurrent use and keeps
// connections to receivers alive between attempts.
type Client struct {
	http         *http.Client
	timeout      time.Duration
	allowPrivate bool
}

// NewClient returns a Client whose attempts each end after timeout (<= 0 means
// DefaultTimeout). Unless allowPrivate (sandbox), it posts only to https URLs
// and refuses, at connect time, any address that is not public.
func NewClient(timeout time.Duration, allowPrivate bool) *Client {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	dialer := &net.Dialer{}
	if !allowPrivate {
		dialer.Control = DialPublicOnly
	}
	return &Client{
		http: &http.Client{
			Transport: &http.Transport{
				Proxy:             nil, // an environment proxy would dial for us, past DialPublicOnly
				DialContext:       dialer.DialContext,
				ForceAttemptHTTP2: true, // a custom DialContext would otherwise turn HTTP/2 off
				// A partner's webhooks mostly go to one receiver, dozens
				// at once under load: keeping only a few of its
				// connections closed the others after each attempt, and
				// most attempts paid a new connection (and its TLS
				// handshake, outside sandbox).
				MaxIdleConnsPerHost: maxIdleConns,
				// And a few dozen in all: 0 keeps every receiver's, and a
				// partner whose payments name a new host each time (one
				// wildcard domain) would have each leave an idle connection
				// open for IdleConnTimeout, thousands a minute.
				MaxIdleConns:           maxIdleConns,
				IdleConnTimeout:        90 * time.Second,
				MaxResponseHeaderBytes: maxResponse,
				// No TLS or header timeouts: the per-attempt context bounds every phase.
			},
			// A receiver answers 2xx itself; following a redirect would also let a
			// public URL bounce the request to an address CheckURL never saw.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		timeout:      timeout,
		allowPrivate: allowPrivate,
	}
}

// Deliver makes one attempt to POST body to rawURL, signed for msgID at now
// (the webhook-timestamp, fresh on every retry while msgID stays the same;
// unsigned when secret is empty). It never retries: the caller's queue owns the schedule and records the Attempt.
func (c *Client) Deliver(ctx context.Context, rawURL, secret, msgID string, body []byte, now time.Time) Attempt {
	start := time.Now() // the wall clock, not now: Duration measures this attempt
	a := c.deliver(ctx, rawURL, secret, msgID, body, now)
	a.Duration = time.Since(start)
	return a
}

func (c *Client) deliver(ctx context.Context, rawURL, secret, msgID string, body []byte, now time.Time) Attempt {
	if _, err := parseURL(rawURL, c.allowPrivate); err != nil {
		return Attempt{Err: FailureInvalidURL}
	}
	// A payment without a webhookSecret (spec §2.9 only recommends one)
	// gets unsigned deliveries rather than none.
	var sig string
	if secret != "" {
		var err error
		if sig, err = Sign(secret, msgID, now, body); err != nil {
			return Attempt{Err: FailureSecretUnusable}
		}
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rawURL, bytes.NewReader(body))
	if err != nil {
		return Attempt{Err: FailureInvalidURL}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set(HeaderID, msgID)
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
	if sig != "" {
		req.Header.Set(HeaderSignature, sig)
	}

	resp, err := c.http.Do(req)
	if err != nil {
		return Attempt{Err: classify(err, c.allowPrivate)}
	}
	// Draining a bounded amount lets a small answer's connection be reused; a
	// larger one is cut off by Close. Its errors change nothing: the status is in.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponse))
	_ = resp.Body.Close()

	a := Attempt{StatusCode: resp.StatusCode, Delivered: resp.StatusCode >= 200 && resp.StatusCode < 300}
	if !a.Delivered {
		a.Err = FailureHTTPStatus
	}
	return a
}
