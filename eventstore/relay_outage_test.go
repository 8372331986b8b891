package eventstore

import (
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore/testenv"
	"github.com/ledger/ledger/projections"
)

// startNATS starts an embedded NATS server with JetStream storing in dir, on
// port (-1: a random one), and shuts it down when t ends.
func startNATS(t *testing.T, port int, dir string) *server.Server {
	t.Helper()
	s, err := server.NewServer(&server.Options{
		Host: "127.0.0.1", Port: port, JetStream: true, StoreDir: dir,
		NoLog: true, NoSigs: true,
	})
	if err != nil {
		t.Fatalf("nats server: %v", err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		t.Fatalf("nats server on port %d not ready within 10s", port)
	}
	t.Cleanup(func() {
		s.Shutdown()
		s.WaitForShutdown()
	})
	return s
}

// TestRelayNATSOutage shuts NATS down for a couple of seconds while writers
// go on appending: appends keep succeeding (they only touch Postgres), and
// once a server is back on the same port and store the relay publishes
// every event exactly once, in order.
func TestRelayNATSOutage(t *testing.T) {
	t.Parallel()
	const outage = 2 * time.Second
	ctx := testenv.Context(t, 90*time.Second)
	dir := t.TempDir()
	ns := startNATS(t, -1, dir)
	port := ns.Addr().(*net.TCPAddr).Port
	url := ns.ClientURL()

	pool := mustMigrated(t, 8)
	store := New(pool, projections.Projector{}, nil)
	js := mustJetStream(t, url, nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond))
	cfg := RelayConfig{Stream: testenv.Name("LEDGER_T"), SubjectPrefix: testenv.Name("ledgert")}
	startRelay(t, NewRelay(pool, js, cfg, testLogger(t), nil))

	// A writer appends a tenant every 20ms until told to stop.
	stop := make(chan struct{})
	var appended, duringOutage atomic.Int64
	var down atomic.Bool
	var wg sync.WaitGroup
	stopWriter := sync.OnceFunc(func() { close(stop); wg.Wait() })
	t.Cleanup(stopWriter) // even when the test stops early
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			_, batches, err := tenantBatches()
			if err == nil {
				_, err = store.Append(ctx, domain.Metadata{}, batches...)
			}
			if err != nil {
				t.Errorf("append (NATS down: %v): got %v, want nil", down.Load(), err)
				return
			}
			appended.Add(1)
			if down.Load() {
				duringOutage.Add(1)
			}
		}
	}()

	time.Sleep(500 * time.Millisecond)
	ns.Shutdown()
	ns.WaitForShutdown()
	down.Store(true)
	time.Sleep(outage)
	// The relay really was cut off: events committed during the outage wait.
	if st, err := readSequencerState(ctx, pool); err != nil || st.Published >= st.Events {
		t.Errorf("during the outage: got %+v (err %v), want published_position behind the events", st, err)
	}
	startNATS(t, port, dir) // same port, same store: the stream comes back with what it had
	down.Store(false)
	time.Sleep(500 * time.Millisecond)
	stopWriter()
	if t.Failed() {
		return
	}
	if duringOutage.Load() == 0 {
		t.Fatalf("got no appends during the outage, want some")
	}

	ids := waitPublished(t, ctx, pool, 60*time.Second)
	if got, want := len(ids), int(appended.Load())*3; got != want {
		t.Errorf("events: got %d, want %d", got, want)
	}
	checkExactlyOnceInOrder(t, readPublished(t, ctx, js, cfg.Stream), ids)
	t.Logf("%d tenants appended, %d of them while NATS was down", appended.Load(), duringOutage.Load())
}
