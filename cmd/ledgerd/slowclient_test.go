package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// Slowloris-style clients: headers or bodies trickled to hold a connection
// and a handler. The server runs with 1 s for headers and 1 s plus 1 s per
// KiB received for a body (LEDGER_BODY_MIN_RATE=1024).

var slowClientEnv = map[string]string{"LEDGER_READ_HEADER_TIMEOUT": "1s", "LEDGER_BODY_TIMEOUT": "1s",
	"LEDGER_BODY_MIN_RATE": "1024"}

// cutOffWithin is how long after the trickle starts the server must have
// answered or hung up: the 1 s allowed plus slack for a loaded machine.
const cutOffWithin = 4 * time.Second

// rawRequest is an HTTP/1.1 request as bytes; headers are name, value pairs.
func rawRequest(method, path string, body []byte, headers ...string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: ledger.test\r\nConnection: close\r\n", method, path)
	for i := 0; i+1 < len(headers); i += 2 {
		fmt.Fprintf(&b, "%s: %s\r\n", headers[i], headers[i+1])
	}
	if body != nil {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", len(body))
	}
	b.WriteString("\r\n")
	b.Write(body)
	return b.Bytes()
}

// slowAnswer is what a slow client got.
type slowAnswer struct {
	resp    *http.Response // nil: the server hung up without answering
	body    []byte
	elapsed time.Duration // from the start of the trickle to the answer or the hang-up
}

// trickle sends raw[:fast] at once, then chunk bytes every interval until
// the server answers or hangs up.
func (s *testServer) trickle(t *testing.T, raw []byte, fast, chunk int, interval time.Duration) slowAnswer {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer conn.Close()
	if _, err := conn.Write(raw[:fast]); err != nil {
		t.Fatalf("write: %v", err)
	}
	start := time.Now()
	answered := make(chan struct{})
	go func() {
		for rest := raw[fast:]; len(rest) > 0; rest = rest[min(chunk, len(rest)):] {
			select {
			case <-answered:
				return
			case <-time.After(interval):
			}
			if _, err := conn.Write(rest[:min(chunk, len(rest))]); err != nil {
				return // hung up on
			}
		}
	}()
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	close(answered)
	a := slowAnswer{elapsed: time.Since(start)}
	if err != nil {
		return a // closed or reset
	}
	a.resp = resp
	a.body, _ = io.ReadAll(resp.Body) // the connection may be reset after the answer
	return a
}

// mustBeCutOff checks that a trickling client was stopped in time: hung up
// on, or answered 408 request_timeout.
func mustBeCutOff(t *testing.T, a slowAnswer) {
	t.Helper()
	if a.elapsed > cutOffWithin {
		t.Errorf("cut off after %v, want within %v", a.elapsed, cutOffWithin)
	}
	if a.resp == nil {
		return
	}
	mustProblem(t, response{Status: a.resp.StatusCode, Header: a.resp.Header, Body: a.body},
		http.StatusRequestTimeout, "request_timeout")
}

// TestSlowHeadersAreCutOff trickles a request's headers: the connection is
// closed once LEDGER_READ_HEADER_TIMEOUT has passed. No handler has run
// yet, so net/http answers itself: it hangs up, or (when the deadline
// strikes inside a header line) sends its plain 400 and hangs up.
func TestSlowHeadersAreCutOff(t *testing.T) {
	t.Parallel()
	s := startServer(t, slowClientEnv)
	raw := rawRequest(http.MethodGet, "/healthz", nil, "X-Padding", strings.Repeat("a", 200))
	a := s.trickle(t, raw, len("GET /healthz HTTP/1.1\r\n"), 1, 20*time.Millisecond) // 50 bytes/s: 5 s for the lot
	if a.resp != nil && (a.resp.StatusCode != http.StatusBadRequest || !a.resp.Close) {
		t.Fatalf("got %d %s, want the connection closed", a.resp.StatusCode, a.body)
	}
	if a.elapsed > cutOffWithin {
		t.Errorf("closed after %v, want within %v", a.elapsed, cutOffWithin)
	}
}

// TestSlowBodiesAreCutOff trickles bodies at 20 bytes a second to POST
// /users (with and without an Idempotency-Key, which reads the body in
// another place) and to a KYC upload: each is cut off in time and nothing
// is created. A body faster than the minimum rate is accepted even though
// it takes longer than LEDGER_BODY_TIMEOUT.
func TestSlowBodiesAreCutOff(t *testing.T) {
	t.Parallel()
	s := startServer(t, slowClientEnv)
	tn := s.createTenant(t, "Slowco")
	tok := s.tenantToken(t, tn.APIKey, tn.APISecret)
	userID := s.createUser(t, tok, "patient@example.com", "Patient")["userId"].(string)
	auth := "Bearer " + tok
	events := s.countEvents(t)

	userBody := func(email string) []byte {
		return []byte(fmt.Sprintf(`{"email":%q,"name":"Slow"}`+strings.Repeat(" ", 100), email))
	}
	for name, headers := range map[string][]string{
		"POST /users":                      {"Authorization", auth, "Content-Type", "application/json"},
		"POST /users with Idempotency-Key": {"Authorization", auth, "Content-Type", "application/json", "Idempotency-Key", "slow-1"},
	} {
		raw := rawRequest(http.MethodPost, "/users", userBody("slow@example.com"), headers...)
		a := s.trickle(t, raw, len(raw)-100, 1, 50*time.Millisecond)
		t.Logf("%s: answered %v after %v", name, a.resp != nil, a.elapsed)
		mustBeCutOff(t, a)
	}

	upload, contentType := multipartBody(t, filePart("id.pdf", pdfBytes), typePart("passport"))
	raw := rawRequest(http.MethodPost, "/users/"+userID+"/kyc-documents", upload.Bytes(),
		"Authorization", auth, "Content-Type", contentType)
	a := s.trickle(t, raw, len(raw)-upload.Len()/2, 1, 50*time.Millisecond)
	t.Logf("KYC upload: answered %v after %v", a.resp != nil, a.elapsed)
	mustBeCutOff(t, a)

	if got := s.countEvents(t); got != events {
		t.Errorf("events: got %d, want %d (cut-off requests append nothing)", got, events)
	}
	var users, documents int
	s.queryRow(t, `SELECT count(*) FROM users WHERE email = 'slow@example.com'`, nil, &users)
	s.queryRow(t, `SELECT count(*) FROM documents`, nil, &documents)
	if users != 0 || documents != 0 {
		t.Errorf("rows: got %d users and %d documents, want none from cut-off requests", users, documents)
	}

	// 4 KiB at about 2 KiB/s: two seconds, past LEDGER_BODY_TIMEOUT, but
	// faster than LEDGER_BODY_MIN_RATE, so the deadline keeps ahead.
	body := []byte(fmt.Sprintf(`{"email":"steady@example.com","name":"Steady"}`+"%*s", 4096, ""))
	raw = rawRequest(http.MethodPost, "/users", body, "Authorization", auth, "Content-Type", "application/json")
	a = s.trickle(t, raw, len(raw)-len(body), 200, 100*time.Millisecond)
	if a.resp == nil || a.resp.StatusCode != http.StatusCreated {
		t.Fatalf("steady body: got %+v after %v, want 201", a.resp, a.elapsed)
	}
	if a.elapsed < time.Second {
		t.Errorf("steady body: took %v, want it past the 1 s LEDGER_BODY_TIMEOUT to show the deadline moving", a.elapsed)
	}
}

// TestDashboardBodiesArePaced: a request to the dashboard that announces
// a body and never sends it (Content-Length: 1000, nothing after the
// headers) is answered or hung up on by the server, as the API's are: no
// route leaves a connection waiting on a body with no deadline.
// GET /dashboard/sign-in answers without reading the body, and net/http
// then reads it to reuse the connection; the others read it as a form.
func TestDashboardBodiesArePaced(t *testing.T) {
	t.Parallel()
	s := startServer(t, slowClientEnv)
	for _, target := range []struct{ method, path string }{
		{http.MethodGet, "/dashboard/sign-in"},
		{http.MethodGet, "/dashboard/anything"},
		{http.MethodPost, "/dashboard/sign-out"},
		{http.MethodPost, "/dashboard/sign-in"},
	} {
		// Keep-alive (no Connection: close), so that net/http wants the
		// unread body off the connection before it answers.
		raw := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: ledger.test\r\nContent-Type: application/x-www-form-urlencoded\r\n"+
			"Content-Length: 1000\r\n\r\n", target.method, target.path)
		t.Run(target.method+" "+target.path, func(t *testing.T) {
			if err := s.stall(t, raw); err != nil {
				t.Errorf("a body that never comes: %v", err)
			}
		})
	}
}

// stall sends raw and nothing more, and returns an error if the server
// neither answers nor hangs up before the client gives up (far past any
// deadline the server sets).
func (s *testServer) stall(t *testing.T, raw string) error {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, raw); err != nil {
		t.Fatalf("write: %v", err)
	}
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	_, err = io.Copy(io.Discard, conn) // an answer, then the close; or the close alone
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return errors.New("the server held the connection, with no answer and no hang-up")
	}
	return nil
}
