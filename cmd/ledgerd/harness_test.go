package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ledger/ledger/cmd/internal/benchkit"
	"github.com/ledger/ledger/eventstore/keys"
	"github.com/ledger/ledger/eventstore/testenv"
)

// The end-to-end tests run a real ledgerd in-process per test (or, to kill
// it, as a process: startProcess), each on its own Postgres database and
// JetStream stream (eventstore/testenv), and create tenants with the real
// ledgerctl binary, built once per test binary.

var (
	binDir    string   // holds the ledgerd and ledgerctl binaries and the master key; removed by TestMain
	masterKey string   // the master key file every test server and ledgerctl share
	builds    sync.Map // command name -> *build
)

// build is one command of cmd/ built into binDir, once per test binary.
type build struct {
	once sync.Once
	path string
	err  error
}

// command returns the path of the named command of cmd/, building it the
// first time.
func command(t *testing.T, name string) string {
	t.Helper()
	v, _ := builds.LoadOrStore(name, &build{})
	b := v.(*build)
	b.once.Do(func() {
		var out bytes.Buffer
		paths, err := benchkit.BuildCommands(context.Background(), binDir, &out, name)
		if err != nil {
			b.err = fmt.Errorf("%w\n%s", err, out.String())
			return
		}
		b.path = paths[0]
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ledgerd-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "make temp dir:", err)
		os.Exit(1)
	}
	binDir = dir
	masterKey = filepath.Join(dir, "master.key")
	if _, _, err := keys.LocalMasterKeyFile(dir); err != nil {
		fmt.Fprintln(os.Stderr, "make master key:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// testServer is a running ledgerd: in this process (app), or a process of
// its own (proc).
type testServer struct {
	URL         string // http://127.0.0.1:port
	DatabaseURL string
	Stream      testenv.Stream
	app         *app
	proc        *benchkit.Ledgerd

	cancel   context.CancelFunc
	done     chan error // receives serve's result once
	stopOnce sync.Once
	serveErr error
	logs     *lockedBuffer
}

// lockedBuffer collects the server's log lines; they are printed when a test fails.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startServer runs ledgerd for t with the test's own database and stream;
// env overrides or adds settings. The server is stopped, and serve's result
// checked, when t ends.
func startServer(t *testing.T, env map[string]string) *testServer {
	t.Helper()
	vars, stream := serverVars(t, env)
	cfg, err := loadEnv(vars)
	if err != nil {
		t.Fatalf("load config: %v", err)
	}
	logs := &lockedBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	setup, cancelSetup := context.WithTimeout(ctx, 30*time.Second)
	defer cancelSetup()
	a, err := newApp(setup, cfg, newLogger(cfg.LogLevel, logs))
	if err != nil {
		cancel()
		t.Fatalf("new app: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		cancel()
		a.close()
		t.Fatalf("listen: %v", err)
	}
	s := &testServer{URL: "http://" + ln.Addr().String(), DatabaseURL: cfg.DatabaseURL, Stream: stream, app: a,
		cancel: cancel, done: make(chan error, 1), logs: logs}
	go func() { s.done <- a.serve(ctx, ln) }()
	t.Cleanup(func() {
		if err := s.stop(); err != nil {
			t.Errorf("serve: got %v, want nil", err)
		}
		if t.Failed() {
			t.Logf("ledgerd log:\n%s", logs.String())
		}
	})
	return s
}

// onStore is env on s's database and stream: a server started with it
// shares s's books, or takes over from s once s stops.
func onStore(s *testServer, env map[string]string) map[string]string {
	out := map[string]string{}
	maps.Copy(out, env)
	out["DATABASE_URL"], out["LEDGER_NATS_STREAM"], out["LEDGER_NATS_SUBJECT_PREFIX"] =
		s.DatabaseURL, s.Stream.Name, s.Stream.SubjectPrefix
	return out
}

// serverVars are a test server's settings: its own database and stream,
// then env's overrides and additions, and the stream it uses (another
// server's, when env names it).
func serverVars(t *testing.T, env map[string]string) (map[string]string, testenv.Stream) {
	t.Helper()
	stream := testenv.NewStream(t)
	vars := map[string]string{
		"DATABASE_URL":               testenv.NewDatabase(t),
		"NATS_URL":                   testenv.NATSURL(),
		"LEDGER_NATS_STREAM":         stream.Name,
		"LEDGER_NATS_SUBJECT_PREFIX": stream.SubjectPrefix,
		"LEDGER_ADDR":                "127.0.0.1:0",
		"LEDGER_DB_MAX_CONNS":        "4",
		"LEDGER_LOG_LEVEL":           "debug",
		"LEDGER_MASTER_KEY_FILE":     masterKey,
		// Tests of other things send bursts from one key and one IP; the
		// rate limit tests set their own limits.
		"LEDGER_RATE_LIMIT":       "0",
		"LEDGER_TOKEN_RATE_LIMIT": "0",
	}
	for k, v := range env {
		vars[k] = v
	}
	return vars, testenv.Stream{Name: vars["LEDGER_NATS_STREAM"], SubjectPrefix: vars["LEDGER_NATS_SUBJECT_PREFIX"]}
}

// stop cancels serve's context, waits for serve to return and closes the
// app; a process is sent SIGTERM and waited for. It returns serve's (the
// process's) result and may be called more than once.
func (s *testServer) stop() error {
	s.stopOnce.Do(func() {
		if s.proc != nil {
			s.serveErr = s.proc.Stop(35 * time.Second)
			return
		}
		s.cancel()
		select {
		case s.serveErr = <-s.done:
		case <-time.After(35 * time.Second):
			s.serveErr = errors.New("serve did not return within 35s of cancellation")
		}
		s.app.close()
	})
	return s.serveErr
}

// response is a whole HTTP response.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

var client = &http.Client{Timeout: 15 * time.Second}

// send performs req and reads the whole response.
func send(t *testing.T, req *http.Request) response {
	t.Helper()
	r, err := trySend(req)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// trySend performs req and reads the whole response; it is safe to call from
// any goroutine.
func trySend(req *http.Request) (response, error) {
	resp, err := client.Do(req)
	if err != nil {
		return response{}, fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return response{}, fmt.Errorf("%s %s: read body: %w", req.Method, req.URL.Path, err)
	}
	return response{Status: resp.StatusCode, Header: resp.Header, Body: body}, nil
}

// sendTogether sends reqs released at one moment, as racing clients would,
// and returns their answers in reqs' order; a request that gets no answer
// fails t.
func sendTogether(t *testing.T, reqs []*http.Request) []response {
	t.Helper()
	results, errs := make([]response, len(reqs)), make([]error, len(reqs))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, req := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			results[i], errs[i] = trySend(req)
		}()
	}
	close(start)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return results
}

// newRequest builds a request to the server; headers are name, value pairs.
func (s *testServer) newRequest(t *testing.T, method, path string, body io.Reader, headers ...string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, body)
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return req
}

// get performs GET path.
func (s *testServer) get(t *testing.T, path string, headers ...string) response {
	t.Helper()
	return send(t, s.newRequest(t, http.MethodGet, path, nil, headers...))
}

// post performs POST path with a JSON body and, when token is not empty, a bearer token.
func (s *testServer) post(t *testing.T, path, token, body string, headers ...string) response {
	t.Helper()
	h := []string{"Content-Type", "application/json"}
	if token != "" {
		h = append(h, "Authorization", "Bearer "+token)
	}
	return send(t, s.newRequest(t, http.MethodPost, path, strings.NewReader(body), append(h, headers...)...))
}

// mustDecode unmarshals a JSON body into v.
func mustDecode(t *testing.T, body []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
}

// problem is an RFC 9457 body as the API writes it.
type problem struct {
	Type     string  `json:"type"`
	Title    string  `json:"title"`
	Status   int     `json:"status"`
	Detail   string  `json:"detail"`
	Instance string  `json:"instance"`
	Code     string  `json:"code"`
	Errors   []field `json:"errors"`
}

type field struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// mustProblem checks that r is a problem+json answer with status and code
// (code "" accepts any) and the members contract §1 always requires.
func mustProblem(t *testing.T, r response, status int, code string) problem {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status: got %d, want %d (body %s)", r.Status, status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type: got %q, want application/problem+json", ct)
	}
	var raw map[string]any
	mustDecode(t, r.Body, &raw)
	for _, k := range []string{"type", "title", "status", "detail", "code"} {
		if v, ok := raw[k]; !ok || v == "" {
			t.Errorf("problem member %s: got %v, want present and not empty (body %s)", k, v, r.Body)
		}
	}
	var p problem
	mustDecode(t, r.Body, &p)
	if p.Status != status {
		t.Errorf("problem status: got %d, want %d", p.Status, status)
	}
	if code != "" && p.Code != code {
		t.Errorf("problem code: got %q, want %q (body %s)", p.Code, code, r.Body)
	}
	return p
}

// mustFieldError checks that p names field among its errors.
func mustFieldError(t *testing.T, p problem, name string) {
	t.Helper()
	for _, f := range p.Errors {
		if f.Field == name {
			if f.Message == "" {
				t.Errorf("errors[].message for %s: got empty, want a message", name)
			}
			return
		}
	}
	t.Errorf("errors: got %+v, want one with field %q", p.Errors, name)
}

// ledgerctl runs the real ledgerctl binary against the server's database
// and returns its stdout.
func (s *testServer) ledgerctl(t *testing.T, args ...string) []byte {
	t.Helper()
	stdout, stderr, err := s.tryLedgerctl(t, args...)
	if err != nil {
		t.Fatalf("ledgerctl %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return stdout
}

// tryLedgerctl runs ledgerctl as ledgerctl does and returns its stdout,
// its stderr and how it ended: a refusal is an exit status, not a failure.
func (s *testServer) tryLedgerctl(t *testing.T, args ...string) (stdout, stderr []byte, err error) {
	t.Helper()
	bin := command(t, "ledgerctl")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "DATABASE_URL="+s.DatabaseURL, "LEDGER_MASTER_KEY_FILE="+masterKey)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.Bytes(), errOut.Bytes(), err
}

// tenant is what ledgerctl tenant create prints.
type tenant struct {
	TenantID    string `json:"tenantId"`
	OwnerUserID string `json:"ownerUserId"`
	APIKey      string `json:"apiKey"`
	APISecret   string `json:"apiSecret"`
}

// createTenant creates a tenant with ledgerctl.
func (s *testServer) createTenant(t *testing.T, name string) tenant {
	t.Helper()
	out := s.ledgerctl(t, "tenant", "create", "--name", name, "--email", strings.ToLower(name)+"@example.com")
	var tn tenant
	mustDecode(t, out, &tn)
	if tn.TenantID == "" || tn.OwnerUserID == "" || tn.APIKey == "" || tn.APISecret == "" {
		t.Fatalf("ledgerctl tenant create: got %s, want tenantId, ownerUserId, apiKey and apiSecret", out)
	}
	return tn
}

// tokenResponse is the body of POST /token and POST /users/token.
type tokenResponse struct {
	AccessToken string `json:"accessToken"`
	TokenType   string `json:"tokenType"`
	ExpiresIn   int64  `json:"expiresIn"`
	ExpiresAt   string `json:"expiresAt"`
	UserID      string `json:"userId"`
}

// tenantToken gets a tenant token for an API key pair.
func (s *testServer) tenantToken(t *testing.T, apiKey, apiSecret string) string {
	t.Helper()
	r := s.post(t, "/token", "", fmt.Sprintf(`{"apiKey":%q,"apiSecret":%q}`, apiKey, apiSecret))
	if r.Status != http.StatusOK {
		t.Fatalf("POST /token: got %d %s, want 200", r.Status, r.Body)
	}
	var tr tokenResponse
	mustDecode(t, r.Body, &tr)
	return tr.AccessToken
}

// userToken gets a user token for userID with a tenant token.
func (s *testServer) userToken(t *testing.T, tenantToken, userID string) string {
	t.Helper()
	r := s.post(t, "/users/token", tenantToken, fmt.Sprintf(`{"userId":%q}`, userID))
	if r.Status != http.StatusOK {
		t.Fatalf("POST /users/token: got %d %s, want 200", r.Status, r.Body)
	}
	var tr tokenResponse
	mustDecode(t, r.Body, &tr)
	return tr.AccessToken
}

// queryRow runs one query on the server's database and scans its row into dest.
func (s *testServer) queryRow(t *testing.T, sql string, args []any, dest ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.DatabaseURL)
	if err != nil {
		t.Fatalf("connect to test database: %v", err)
	}
	defer conn.Close(context.Background())
	if err := conn.QueryRow(ctx, sql, args...).Scan(dest...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// countEvents returns the number of rows in the events table.
func (s *testServer) countEvents(t *testing.T) int {
	t.Helper()
	var n int
	s.queryRow(t, `SELECT count(*) FROM events`, nil, &n)
	return n
}

// signingKey returns the key the server signs with.
func (s *testServer) signingKey(t *testing.T) (kid string, secret []byte) {
	t.Helper()
	key, err := s.app.keys.Signing(context.Background())
	if err != nil {
		t.Fatalf("signing key: %v", err)
	}
	return key.KID, key.Secret
}

// decodeJWT splits a compact JWT and decodes its header and claims without
// any JWT library.
func decodeJWT(t *testing.T, token string) (header, claims map[string]any) {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("token %q: got %d parts, want 3", token, len(parts))
	}
	for i, v := range []*map[string]any{&header, &claims} {
		raw, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil {
			t.Fatalf("token part %d: %v", i, err)
		}
		mustDecode(t, raw, v)
	}
	return header, claims
}

// signJWT makes a compact HS256-style JWT by hand: header and claims as
// given, signed with HMAC-SHA256 under secret.
func signJWT(t *testing.T, header, claims map[string]any, secret []byte) string {
	t.Helper()
	h, err := json.Marshal(header)
	if err != nil {
		t.Fatal(err)
	}
	c, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	signing := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(c)
	return signing + "." + hmacSignature(signing, secret)
}

func hmacSignature(signingInput string, secret []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(signingInput))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}
