package webhooks

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const testSecret = vectorSecret

var (
	testBody = []byte(`{"id":"evt_1","type":"payment.created"}`)
	testNow  = time.Unix(1_750_000_000, 0)
)

// receiver is an httptest server on loopback that counts the connections it
// accepted and the requests it saw, to prove what never reached it.
type receiver struct {
	*httptest.Server
	conns, closed, requests atomic.Int32
}

func newReceiver(t *testing.T, tls bool, h http.HandlerFunc) *receiver {
	t.Helper()
	return startReceiver(t, tls, nil, h)
}

// startReceiver serves on ln, or on 127.0.0.1 when ln is nil.
func startReceiver(t *testing.T, tls bool, ln net.Listener, h http.HandlerFunc) *receiver {
	t.Helper()
	r := &receiver{}
	r.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.requests.Add(1)
		h(w, req)
	}))
	if ln != nil {
		_ = r.Listener.Close()
		r.Listener = ln
	}
	r.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			r.conns.Add(1)
		case http.StateClosed, http.StateHijacked:
			r.closed.Add(1)
		}
	}
	if tls {
		r.StartTLS()
	} else {
		r.Start()
	}
	t.Cleanup(r.Close)
	return r
}

func status(code int) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(code) }
}

func deliver(c *Client, url string) Attempt {
	return c.Deliver(context.Background(), url, testSecret, "evt_1", testBody, testNow)
}

func TestDeliverSendsVerifiableStandardWebhook(t *testing.T) {
	type seen struct {
		header http.Header
		body   []byte
	}
	got := make(chan seen, 1)
	r := newReceiver(t, false, func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		got <- seen{req.Header, body}
		w.WriteHeader(http.StatusNoContent)
	})
	a := deliver(NewClient(time.Second, true), r.URL+"/hooks")
	if !a.Delivered || a.StatusCode != http.StatusNoContent || a.Err != "" || a.Duration <= 0 {
		t.Fatalf("Attempt = %+v, want delivered with 204", a)
	}
	s := <-got
	// The receiver's clock is testNow: the timestamp must be the now passed in.
	if err := Verify(testSecret, s.header, s.body, 5*time.Minute, testNow); err != nil {
		t.Fatalf("receiver cannot verify: %v (headers %v)", err, s.header)
	}
	for name, want := range map[string]string{
		"Content-Type":  "application/json",
		HeaderID:        "evt_1",
		HeaderTimestamp: strconv.FormatInt(testNow.Unix(), 10),
	} {
		if v := s.header.Get(name); v != want {
			t.Errorf("%s = %q, want %q", name, v, want)
		}
	}
	if ua := s.header.Get("User-Agent"); !strings.HasPrefix(ua, "ledger-webhooks/") {
		t.Errorf("User-Agent = %q, want one naming the service", ua)
	}
	if string(s.body) != string(testBody) {
		t.Errorf("body = %q, want %q", s.body, testBody)
	}
}

func TestDeliverNon2xxIsAFailedAttempt(t *testing.T) {
	for _, code := range []int{http.StatusInternalServerError, http.StatusBadRequest, http.StatusGone} {
		r := newReceiver(t, false, status(code))
		a := deliver(NewClient(time.Second, true), r.URL)
		if a.Delivered || a.StatusCode != code || a.Err != FailureHTTPStatus {
			t.Errorf("status %d: Attempt = %+v, want not delivered, that status and %s", code, a, FailureHTTPStatus)
		}
	}
}

func TestDeliverDoesNotFollowRedirects(t *testing.T) {
	target := newReceiver(t, false, status(http.StatusOK))
	r := newReceiver(t, false, func(w http.ResponseWriter, req *http.Request) {
		http.Redirect(w, req, target.URL, http.StatusTemporaryRedirect)
	})
	a := deliver(NewClient(time.Second, true), r.URL)
	if a.Delivered || a.StatusCode != http.StatusTemporaryRedirect || a.Err != FailureHTTPStatus {
		t.Errorf("Attempt = %+v, want a failed 307, %s", a, FailureHTTPStatus)
	}
	if n := target.requests.Load(); n != 0 {
		t.Errorf("redirect target saw %d requests, want 0", n)
	}
}

func TestDeliverTimesOut(t *testing.T) {
	r := newReceiver(t, false, func(_ http.ResponseWriter, req *http.Request) {
		// The server notices a hang-up only once the body is consumed.
		_, _ = io.Copy(io.Discard, req.Body)
		select { // sleep past the client's timeout; end when it hangs up
		case <-req.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	const timeout = 200 * time.Millisecond
	start := time.Now()
	a := deliver(NewClient(timeout, true), r.URL)
	if elapsed := time.Since(start); elapsed > timeout+time.Second {
		t.Errorf("Deliver took %s with a %s timeout", elapsed, timeout)
	}
	if a.Delivered || a.StatusCode != 0 || a.Err != FailureTimeout {
		t.Errorf("Attempt = %+v, want status 0 and a timeout error", a)
	}
	if a.Duration < timeout {
		t.Errorf("Duration = %s, want at least the timeout", a.Duration)
	}
}

func TestDeliverConnectionClosedMidResponse(t *testing.T) {
	for _, partial := range []string{
		"", // closed before any answer
		"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n", // closed inside the headers
	} {
		r := newReceiver(t, false, func(w http.ResponseWriter, _ *http.Request) {
			conn, buf, err := http.NewResponseController(w).Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			_, _ = buf.WriteString(partial)
			_ = buf.Flush()
			_ = conn.Close()
		})
		a := deliver(NewClient(time.Second, true), r.URL)
		if a.Delivered || a.StatusCode != 0 || a.Err != FailureConnectionFailed {
			t.Errorf("after %q: Attempt = %+v, want status 0 and %s", partial, a, FailureConnectionFailed)
		}
	}
}

func TestDeliverStopsReadingALargeAnswer(t *testing.T) {
	r := newReceiver(t, false, func(w http.ResponseWriter, req *http.Request) {
		chunk := make([]byte, 32<<10)
		for req.Context().Err() == nil { // until the client hangs up
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	a := deliver(NewClient(5*time.Second, true), r.URL)
	if !a.Delivered || a.Duration > 2*time.Second {
		t.Errorf("Attempt = %+v, want delivered without reading the endless body", a)
	}
}

func TestDeliverRefusesNonPublicAddresses(t *testing.T) {
	const notPublic = FailureBlockedTarget
	tlsLoopback := newReceiver(t, true, status(http.StatusOK))
	_, port, _ := net.SplitHostPort(tlsLoopback.Listener.Addr().String())
	plain := newReceiver(t, false, status(http.StatusOK))

	cases := []struct {
		name, url string
		r         *receiver // the server that must see nothing, if any
		want      string
	}{
		{"127.0.0.1 literal", tlsLoopback.URL, tlsLoopback, notPublic},
		{"localhost", "https://localhost:" + port + "/", tlsLoopback, notPublic},
		{"plain http", plain.URL, plain, FailureInvalidURL},
		{"10.x literal", "https://10.0.0.1/", nil, notPublic},
		{"169.254.x literal", "https://169.254.169.254/latest/meta-data/", nil, notPublic},
		{"100.64.x literal", "https://100.64.0.1/", nil, notPublic},
		{"IPv4-mapped loopback", "https://[::ffff:127.0.0.1]:" + port + "/", tlsLoopback, notPublic},
	}
	if ln, err := net.Listen("tcp", "[::1]:0"); err == nil {
		v6 := startReceiver(t, true, ln, status(http.StatusOK))
		cases = append(cases, struct {
			name, url string
			r         *receiver
			want      string
		}{"[::1] literal", v6.URL, v6, notPublic})
	} else {
		t.Logf("no IPv6 loopback, [::1] not tested: %v", err)
	}

	c := NewClient(2*time.Second, false)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := deliver(c, tc.url)
			if a.Delivered || a.StatusCode != 0 || a.Err != tc.want {
				t.Errorf("Attempt = %+v, want status 0 and %s", a, tc.want)
			}
			if tc.r != nil && tc.r.conns.Load() != 0 {
				t.Errorf("server accepted %d connections, want none", tc.r.conns.Load())
			}
		})
	}
}

func TestDeliverRefusesUnsignableInput(t *testing.T) {
	r := newReceiver(t, false, status(http.StatusOK))
	a := NewClient(time.Second, true).Deliver(context.Background(), r.URL, "whsec_***", "evt_1", testBody, testNow)
	if a.Delivered || a.Err != FailureSecretUnusable || r.conns.Load() != 0 {
		t.Errorf("Attempt = %+v with %d connections, want %s and no connection", a, r.conns.Load(), FailureSecretUnusable)
	}
}

// Receivers that keep connections open, each on a host of its own (one
// wildcard domain), leave at most maxIdleConns idle connections behind,
// however many hosts there were.
func TestDeliverKeepsABoundedNumberOfIdleConnections(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "0.0.0.0:0") // every 127.0.0.N reaches it
	if err != nil {
		t.Fatal(err)
	}
	r := startReceiver(t, false, ln, status(http.StatusNoContent))
	open := func() int32 { return r.conns.Load() - r.closed.Load() }
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	c := NewClient(time.Second, true)
	const hosts = maxIdleConns + 36
	for n := 1; n <= hosts; n++ {
		if a := deliver(c, "http://127.0.0."+strconv.Itoa(n)+":"+port+"/hook"); !a.Delivered {
			t.Fatalf("host %d: %+v", n, a)
		}
	}
	for deadline := time.Now().Add(10 * time.Second); open() > maxIdleConns; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("after %d receivers: %d connections still open, want at most %d", hosts, open(), maxIdleConns)
		}
	}
}

// A partner's receiver gets many webhooks at once under load: the client
// keeps the connections of such a burst for the next one, rather than
// closing all but a few and opening new ones (a new connection, and
// outside sandbox a TLS handshake, per attempt).
func TestDeliverReusesConnectionsToOneReceiver(t *testing.T) {
	t.Parallel()
	const burst = 32
	var (
		mu      sync.Mutex
		arrived int
		release = make(chan struct{})
	)
	// Each burst's requests wait for one another, so each holds a
	// connection of its own.
	r := newReceiver(t, false, func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		wait := release
		if arrived++; arrived%burst == 0 {
			close(release)
			release = make(chan struct{})
		}
		mu.Unlock()
		<-wait
		w.WriteHeader(http.StatusNoContent)
	})
	c := NewClient(10*time.Second, true)
	send := func() {
		var wg sync.WaitGroup
		for range burst {
			wg.Go(func() {
				if a := deliver(c, r.URL+"/hook"); !a.Delivered {
					t.Errorf("attempt: %+v", a)
				}
			})
		}
		wg.Wait()
	}
	send()
	first := r.conns.Load()
	send()
	if opened := r.conns.Load() - first; opened > burst/4 {
		t.Errorf("second burst of %d opened %d new connections (first: %d), want the first's reused", burst, opened, first)
	}
}
