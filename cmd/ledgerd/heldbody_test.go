package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ledger/ledger/httpapi"
)

// TestKeyedBodiesOverTheRouteLimitUseNoKey: a keyed JSON request over the
// route's 1 MiB is 413 body_too_large before its body is held, whether
// Content-Length announces it or a chunked body runs over, and the key
// stays unused: the same key then runs the request it was meant for.
func TestKeyedBodiesOverTheRouteLimitUseNoKey(t *testing.T) {
	t.Parallel()
	s := startServer(t, nil)
	tn := s.createTenant(t, "Bigbody")
	tok := s.tenantToken(t, tn.APIKey, tn.APISecret)
	events := s.countEvents(t)
	big := `{"email":"big@example.com","name":"Big"}` + strings.Repeat(" ", 2<<20)
	for name, body := range map[string]func() io.Reader{
		"with Content-Length": func() io.Reader { return strings.NewReader(big) },
		"chunked":             func() io.Reader { return io.MultiReader(strings.NewReader(big)) }, // no length: chunked
	} {
		t.Run(name, func(t *testing.T) {
			key := uuid.NewString()
			r := send(t, s.newRequest(t, http.MethodPost, "/users", body(), "Content-Type", "application/json",
				"Authorization", "Bearer "+tok, "Idempotency-Key", key))
			mustProblem(t, r, http.StatusRequestEntityTooLarge, "body_too_large")
			email := strings.ReplaceAll(strings.ToLower(name), " ", "-") + "@example.com"
			mustStatus(t, s.call(t, http.MethodPost, "/users", tok, fmt.Sprintf(`{"email":%q,"name":"Fits"}`, email),
				"Idempotency-Key", key), http.StatusCreated)
		})
	}
	t.Cleanup(func() {
		if got := s.countEvents(t); got != events+2 {
			t.Errorf("events: got %d, want %d (the two fitting requests only)", got, events+2)
		}
	})
}

// TestKeyedBodiesHaveACeiling runs with LEDGER_MAX_BUFFERED_BYTES at its
// least, one largest upload. A keyed upload that has sent all but its
// last KiB holds nearly all of it; another keyed upload meanwhile is 503
// server_busy with Retry-After and takes nothing; once the first is gone,
// the second, retried under the same key, is stored. JSON bodies without
// a key are held under the same ceiling.
func TestKeyedBodiesHaveACeiling(t *testing.T) {
	t.Parallel()
	s := startServer(t, map[string]string{"LEDGER_MAX_BUFFERED_BYTES": strconv.Itoa(httpapi.MinBufferedBytes)})
	tn := s.createTenant(t, "Heldco")
	tok := s.tenantToken(t, tn.APIKey, tn.APISecret)
	userID := s.createUser(t, tok, "held@example.com", "Held")["userId"].(string)
	path := "/users/" + userID + "/kyc-documents"

	upload, contentType := multipartBody(t, filePart("big.pdf", bigPDF(10<<20)), typePart("other"))
	raw := rawRequest(http.MethodPost, path, upload.Bytes(), "Authorization", "Bearer "+tok, "Content-Type", contentType,
		"Idempotency-Key", uuid.NewString())
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write(raw[:len(raw)-1024]); err != nil {
		t.Fatal(err)
	}
	s.awaitHeld(t, "the stalled upload's", func(held int) bool { return held >= 10<<20-1024 })

	second, secondType := multipartBody(t, filePart("small.pdf", bigPDF(1<<20)), typePart("other"))
	key := uuid.NewString()
	r := send(t, s.newRequest(t, http.MethodPost, path, strings.NewReader(second.String()), "Authorization", "Bearer "+tok,
		"Content-Type", secondType, "Idempotency-Key", key))
	mustProblem(t, r, http.StatusServiceUnavailable, "server_busy")
	if r.Header.Get("Retry-After") == "" {
		t.Error("503 server_busy without Retry-After")
	}

	// A JSON body without a key is held under the same ceiling (about
	// 64 KiB are left): a larger one, even to an unauthenticated route, is
	// refused the same way and changes nothing.
	events := s.countEvents(t)
	bigUser := `{"email":"big@example.com","name":"` + strings.Repeat("n", 100<<10) + `"}`
	mustProblem(t, s.call(t, http.MethodPost, "/users", tok, bigUser), http.StatusServiceUnavailable, "server_busy")
	bigToken := `{"apiKey":"` + tn.APIKey + `","apiSecret":"` + strings.Repeat("s", 100<<10) + `"}`
	mustProblem(t, s.call(t, http.MethodPost, "/token", "", bigToken), http.StatusServiceUnavailable, "server_busy")
	if n := s.countEvents(t); n != events {
		t.Errorf("events: got %d after refused requests, want %d", n, events)
	}

	conn.Close()
	s.awaitHeld(t, "no", func(held int) bool { return held == 0 })
	r = send(t, s.newRequest(t, http.MethodPost, path, strings.NewReader(second.String()), "Authorization", "Bearer "+tok,
		"Content-Type", secondType, "Idempotency-Key", key))
	mustStatus(t, r, http.StatusCreated)
	if r := s.call(t, http.MethodPost, "/users", tok, bigUser); r.Status == http.StatusServiceUnavailable {
		t.Errorf("a large JSON body once nothing is held: got 503 %s", r.Body)
	}
}

// awaitHeld polls the server's ledger_http_request_bytes_held until ok
// holds of it, and fails t if it does not within 30 s.
func (s *testServer) awaitHeld(t *testing.T, what string, ok func(held int) bool) {
	t.Helper()
	held := -1
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		r := s.get(t, "/metrics")
		sc := bufio.NewScanner(strings.NewReader(string(r.Body)))
		for sc.Scan() {
			if v, found := strings.CutPrefix(sc.Text(), "ledger_http_request_bytes_held "); found {
				f, _ := strconv.ParseFloat(v, 64)
				held = int(f)
			}
		}
		if ok(held) {
			return
		}
	}
	t.Fatalf("waiting for %s bytes held: last saw %d", what, held)
}

// TestKeyedBodyCutShortIsUnreadable: a keyed body whose connection closes
// before its Content-Length is 400 unreadable_body, not run as though the
// bytes that came were all of it.
func TestKeyedBodyCutShortIsUnreadable(t *testing.T) {
	t.Parallel()
	s := startServer(t, nil)
	tn := s.createTenant(t, "Shortco")
	tok := s.tenantToken(t, tn.APIKey, tn.APISecret)
	body := []byte(`{"email":"short@example.com","name":"Short"}` + strings.Repeat(" ", 100))
	raw := rawRequest(http.MethodPost, "/users", body, "Authorization", "Bearer "+tok, "Content-Type", "application/json",
		"Idempotency-Key", uuid.NewString())
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write(raw[:len(raw)-50]); err != nil {
		t.Fatal(err)
	}
	conn.(*net.TCPConn).CloseWrite()
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("read the answer: %v", err)
	}
	got, _ := io.ReadAll(resp.Body)
	mustProblem(t, response{Status: resp.StatusCode, Header: resp.Header, Body: got}, http.StatusBadRequest, "unreadable_body")
}
