package webhooks

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tcpTarget accepts connections on loopback and hands each to serve.
func tcpTarget(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serve(c)
		}
	}()
	return ln.Addr().String()
}

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// A failed attempt records one of a fixed set of classes and nothing of
// the target's answer: in sandbox mode a partner may point webhooks at the
// service's own network, and must learn neither what answers there nor a
// refused port from a reset or a closed one.
func TestDeliverRecordsOnlyAFailureClass(t *testing.T) {
	const banner = `INFO {"server_id":"NSECRETBANNER","version":"2.10.0"}` + "\r\n"
	refused := "http://" + closedPort(t) + "/"
	reset := "http://" + tcpTarget(t, func(c net.Conn) {
		_ = c.(*net.TCPConn).SetLinger(0) // close with RST
		_ = c.Close()
	}) + "/"
	closed := "http://" + tcpTarget(t, func(c net.Conn) { _ = c.Close() }) + "/"
	talker := tcpTarget(t, func(c net.Conn) { // a NATS server's greeting
		_, _ = c.Write([]byte(banner))
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, _ = c.Read(make([]byte, 1))
		_ = c.Close()
	})
	plain := newReceiver(t, false, status(http.StatusOK))
	untrusted := newReceiver(t, true, status(http.StatusOK))
	failing := newReceiver(t, false, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusBadGateway)
		_, _ = w.Write([]byte("upstream 10.0.0.7:6379 said -NOAUTH"))
	})

	c := NewClient(2*time.Second, true)
	for _, tc := range []struct {
		name, url string
		want      string
		code      int
	}{
		{"refused", refused, FailureConnectionFailed, 0},
		{"reset", reset, FailureConnectionFailed, 0},
		{"closed", closed, FailureConnectionFailed, 0},
		{"unresolvable", "http://nxdomain.invalid/", FailureConnectionFailed, 0},
		{"not HTTP", "http://" + talker + "/", FailureInvalidResponse, 0},
		{"TLS to a plain server", strings.Replace(plain.URL, "http:", "https:", 1), FailureTLS, 0},
		{"untrusted certificate", untrusted.URL, FailureTLS, 0},
		{"HTTP status", failing.URL, FailureHTTPStatus, http.StatusBadGateway},
		{"not a URL", "ftp://example.com/", FailureInvalidURL, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := deliver(c, tc.url)
			if a.Delivered || a.Err != tc.want || a.StatusCode != tc.code {
				t.Errorf("Attempt = %+v, want error %q and status %d", a, tc.want, tc.code)
			}
		})
	}
}

// An attempt cut short by the service's own shutdown is a lost connection,
// not an answer that was not HTTP.
func TestDeliverCanceledIsConnectionFailed(t *testing.T) {
	r := newReceiver(t, false, status(http.StatusOK))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	a := NewClient(time.Second, true).Deliver(ctx, r.URL, testSecret, "evt_1", testBody, testNow)
	if a.Delivered || a.Err != FailureConnectionFailed {
		t.Errorf("Attempt = %+v, want %s", a, FailureConnectionFailed)
	}
}

// A target that closes the connection before answering reads as a lost
// connection whichever way net/http reports it: an EOF, a reset, or (now
// and then, when the transport had taken the fresh connection for idle)
// its unexported "server closed idle connection".
func TestClassifyClosedConnections(t *testing.T) {
	for _, err := range []error{
		&url.Error{Op: "Post", URL: "http://127.0.0.1:1/", Err: io.EOF},
		&url.Error{Op: "Post", URL: "http://127.0.0.1:1/", Err: syscall.ECONNRESET},
		&url.Error{Op: "Post", URL: "http://127.0.0.1:1/", Err: errors.New("http: server closed idle connection")},
	} {
		if got := classify(err, true); got != FailureConnectionFailed {
			t.Errorf("classify(%v): got %q, want %q", err, got, FailureConnectionFailed)
		}
	}
	malformed := &url.Error{Op: "Post", URL: "http://127.0.0.1:1/", Err: errors.New(`net/http: HTTP/1.x transport connection broken: malformed HTTP response "INFO {}"`)}
	if got := classify(malformed, true); got != FailureInvalidResponse {
		t.Errorf("classify(%v): got %q, want %q", malformed, got, FailureInvalidResponse)
	}
}
