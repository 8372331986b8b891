package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
)

// pgCounter is a TCP proxy between ledgerd and Postgres that reads the
// wire protocol going through it and counts what ledgerd asks of the
// server: statements executed (an Execute, or a simple Query), round trips
// (a Sync, which ends a pipeline, or a simple Query), transactions ended
// (a ReadyForQuery that leaves the session idle), each statement's text,
// and each connection's backend process, whose CPU time it reads from
// /proc. Counted on the wire, these are what the code does, whatever the
// machine's load; pg_stat_statements would need a server restart with it
// preloaded. It understands only unencrypted sessions: one that switches
// to TLS or GSS is passed through uncounted (opaque).
type pgCounter struct {
	ln     net.Listener
	server string // host:port of Postgres

	mu        sync.Mutex
	counts    pgCounts
	bySQL     map[string]int64 // statements executed, by normalised text
	backends  map[int]procCPU  // live connections' backend pids → CPU when last read
	closedCPU uint64           // CPU ticks of backends whose connection ended
	opaque    int              // connections that could not be read
}

// pgCounts is what the proxy has counted since it started.
type pgCounts struct {
	Statements   int64 // Execute messages and simple Query messages
	RoundTrips   int64 // Sync messages and simple Query messages
	Transactions int64 // ReadyForQuery with status idle: a commit or a rollback
	Connections  int64 // sessions opened
}

// startPGCounter listens on a free loopback port and forwards every
// connection to the Postgres server of serverURL.
func startPGCounter(serverURL string) (*pgCounter, error) {
	u, err := url.Parse(serverURL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("-database-url must be a postgres://host/database URL, not %q", serverURL)
	}
	server := u.Host
	if u.Port() == "" {
		server = net.JoinHostPort(u.Hostname(), "5432")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("statement counter: %w", err)
	}
	c := &pgCounter{ln: ln, server: server, bySQL: map[string]int64{}, backends: map[int]procCPU{}}
	go c.accept()
	return c, nil
}

// URL returns serverURL with its host:port replaced by the proxy's.
func (c *pgCounter) URL(serverURL string) (string, error) {
	u, err := url.Parse(serverURL)
	if err != nil {
		return "", err
	}
	u.Host = c.ln.Addr().String()
	return u.String(), nil
}

// Close stops accepting connections; the open ones end with ledgerd's.
func (c *pgCounter) Close() error { return c.ln.Close() }

func (c *pgCounter) accept() {
	for {
		client, err := c.ln.Accept()
		if err != nil {
			return
		}
		go c.serve(client)
	}
}

// pgSnapshot is the proxy's counters at one moment.
type pgSnapshot struct {
	pgCounts
	CPUTicks uint64 // backends' CPU so far, ended connections' included
	BySQL    map[string]int64
	Opaque   int
}

// snapshot reads every live backend's CPU time and returns the counters.
func (c *pgCounter) snapshot() pgSnapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := pgSnapshot{pgCounts: c.counts, CPUTicks: c.closedCPU, BySQL: make(map[string]int64, len(c.bySQL)), Opaque: c.opaque}
	for pid, last := range c.backends {
		if now := readProcCPU(pid); now.ok {
			c.backends[pid] = now
			last = now
		}
		s.CPUTicks += last.ticks
	}
	for q, n := range c.bySQL {
		s.BySQL[q] = n
	}
	return s
}

func (c *pgCounter) serve(client net.Conn) {
	defer client.Close()
	server, err := net.Dial("tcp", c.server)
	if err != nil {
		return
	}
	defer server.Close()
	cr, sr := bufio.NewReader(client), bufio.NewReader(server)
	if !c.startup(cr, client, sr, server) {
		return
	}
	c.mu.Lock()
	c.counts.Connections++
	c.mu.Unlock()
	var pid int
	done := make(chan struct{})
	go func() {
		defer close(done)
		pid = c.pumpBackend(sr, client)
		client.Close()
	}()
	c.pumpFrontend(cr, server)
	server.Close()
	<-done
	if pid != 0 {
		c.mu.Lock()
		last := c.backends[pid]
		if now := readProcCPU(pid); now.ok {
			last = now
		}
		c.closedCPU += last.ticks
		delete(c.backends, pid)
		c.mu.Unlock()
	}
}

// Protocol codes of the startup packet that ask for encryption first.
const (
	sslRequest    = 80877103
	gssEncRequest = 80877104
)

// startup forwards the session's startup packet, answering encryption
// requests on the way. It reports false when the session cannot be read
// (it was then passed through, or ended).
func (c *pgCounter) startup(cr *bufio.Reader, client net.Conn, sr *bufio.Reader, server net.Conn) bool {
	for {
		var head [8]byte
		if _, err := io.ReadFull(cr, head[:]); err != nil {
			return false
		}
		n := int(binary.BigEndian.Uint32(head[:4]))
		if n < 8 {
			return false
		}
		body := make([]byte, n-8)
		if _, err := io.ReadFull(cr, body); err != nil {
			return false
		}
		if _, err := server.Write(append(head[:], body...)); err != nil {
			return false
		}
		code := binary.BigEndian.Uint32(head[4:])
		if code != sslRequest && code != gssEncRequest {
			return true
		}
		answer, err := sr.ReadByte()
		if err != nil {
			return false
		}
		if _, err := client.Write([]byte{answer}); err != nil {
			return false
		}
		if answer != 'N' {
			c.mu.Lock()
			c.opaque++
			c.mu.Unlock()
			go io.Copy(server, cr)
			io.Copy(client, sr)
			return false
		}
	}
}

// readMessage reads one typed message: its type and its body.
func readMessage(r *bufio.Reader, buf []byte) (byte, []byte, error) {
	var head [5]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return 0, nil, err
	}
	n := int(binary.BigEndian.Uint32(head[1:]))
	if n < 4 {
		return 0, nil, errors.New("bad message length")
	}
	if cap(buf) < n-4 {
		buf = make([]byte, n-4)
	}
	buf = buf[:n-4]
	_, err := io.ReadFull(r, buf)
	return head[0], buf, err
}

// writeMessage writes a typed message as it was read.
func writeMessage(w *bufio.Writer, typ byte, body []byte) error {
	var head [5]byte
	head[0] = typ
	binary.BigEndian.PutUint32(head[1:], uint32(len(body)+4))
	if _, err := w.Write(head[:]); err != nil {
		return err
	}
	_, err := w.Write(body)
	return err
}

// pumpFrontend forwards the client's messages, counting statements by
// their text: a Parse names its statement, a Bind puts one in a portal, an
// Execute runs a portal.
func (c *pgCounter) pumpFrontend(cr *bufio.Reader, server net.Conn) {
	w := bufio.NewWriter(server)
	statements := map[string]string{} // prepared statement name → text
	portals := map[string]string{}    // portal name → text
	var buf []byte
	for {
		typ, body, err := readMessage(cr, buf)
		if err != nil {
			return
		}
		buf = body
		switch typ {
		case 'P':
			name, rest := cstring(body)
			query, _ := cstring(rest)
			statements[name] = normaliseSQL(query)
		case 'B':
			portal, rest := cstring(body)
			stmt, _ := cstring(rest)
			portals[portal] = statements[stmt]
		case 'E':
			portal, _ := cstring(body)
			c.count(portals[portal], false)
		case 'Q':
			query, _ := cstring(body)
			c.count(normaliseSQL(query), true)
		case 'S':
			c.mu.Lock()
			c.counts.RoundTrips++
			c.mu.Unlock()
		}
		if err := writeMessage(w, typ, body); err != nil {
			return
		}
		// Pass everything on as soon as the client has nothing more queued.
		if cr.Buffered() == 0 {
			if err := w.Flush(); err != nil {
				return
			}
		}
		if typ == 'X' {
			return
		}
	}
}

// pumpBackend forwards the server's messages, counting the transactions
// they end, and returns the backend's pid (BackendKeyData).
func (c *pgCounter) pumpBackend(sr *bufio.Reader, client net.Conn) int {
	w := bufio.NewWriter(client)
	pid := 0
	var buf []byte
	for {
		typ, body, err := readMessage(sr, buf)
		if err != nil {
			return pid
		}
		buf = body
		switch {
		case typ == 'K' && len(body) >= 4:
			pid = int(binary.BigEndian.Uint32(body))
			c.mu.Lock()
			c.backends[pid] = readProcCPU(pid)
			c.mu.Unlock()
		case typ == 'Z' && len(body) == 1 && body[0] == 'I':
			c.mu.Lock()
			c.counts.Transactions++
			c.mu.Unlock()
		}
		if err := writeMessage(w, typ, body); err != nil {
			return pid
		}
		if sr.Buffered() == 0 {
			if err := w.Flush(); err != nil {
				return pid
			}
		}
	}
}

// count records one statement executed; a simple Query is also a round trip.
func (c *pgCounter) count(query string, simple bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts.Statements++
	if simple {
		c.counts.RoundTrips++
	}
	c.bySQL[query]++
}

// cstring splits b after its first NUL-terminated string.
func cstring(b []byte) (string, []byte) {
	i := bytes.IndexByte(b, 0)
	if i < 0 {
		return string(b), nil
	}
	return string(b[:i]), b[i+1:]
}

// normaliseSQL is a statement's text on one line: the key the profile
// lists statements by.
func normaliseSQL(q string) string { return strings.Join(strings.Fields(q), " ") }
