package eventstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore/testenv"
	"github.com/ledger/ledger/projections"
)

// startNATSCluster starts n embedded NATS servers with JetStream, routed
// into one cluster, and shuts them down when t ends. Their route ports are
// picked free beforehand: every server must know every route when it
// starts, and a clustered JetStream server is not ready until it has peers.
func startNATSCluster(t *testing.T, n int) []*server.Server {
	t.Helper()
	var listeners []net.Listener
	var routes []*url.URL
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		listeners = append(listeners, l)
		routes = append(routes, &url.URL{Scheme: "nats-route", Host: l.Addr().String()})
	}
	for _, l := range listeners {
		l.Close()
	}
	var servers []*server.Server
	for i := range n {
		o := &server.Options{ServerName: fmt.Sprintf("n%d", i), Host: "127.0.0.1", Port: -1, JetStream: true,
			StoreDir: t.TempDir(), NoLog: true, NoSigs: true, Routes: routes}
		o.Cluster.Name, o.Cluster.Host, o.Cluster.Port = "relay-test", "127.0.0.1", listeners[i].Addr().(*net.TCPAddr).Port
		s, err := server.NewServer(o)
		if err != nil {
			t.Fatalf("nats server %d: %v", i, err)
		}
		go s.Start()
		t.Cleanup(func() {
			s.Shutdown()
			s.WaitForShutdown()
		})
		servers = append(servers, s)
	}
	for i, s := range servers {
		if !s.ReadyForConnections(30 * time.Second) {
			t.Fatalf("nats server %d not ready within 30s", i)
		}
	}
	return servers
}

// TestRelayStreamLeaderChangesMidRound runs the relay against a stream of
// three replicas whose leader steps down again and again while rounds of
// messages are in flight: the old leader drops what reaches it after it
// stepped down, and the later messages of the round reach the new one, out
// of the chain. Every event is still published exactly once, in order, and
// the stream goes on taking messages. (Chained by the previous message's id
// alone, those later messages can fail on every replica, after which the
// stream of nats-server 2.15 takes nothing more, for good. This test does
// not provoke that every time: the old chaining passed it in most runs,
// failing only in those where the step-down requests timed out.
// TestClusteredStreamRefusesAWrongSequenceCleanly pins the mechanism.)
func TestRelayStreamLeaderChangesMidRound(t *testing.T) {
	t.Parallel()
	ctx := testenv.Context(t, 3*time.Minute)
	servers := startNATSCluster(t, 3)
	pool := mustMigrated(t, 8)
	store := New(pool, projections.Projector{}, nil)
	js := mustJetStream(t, servers[0].ClientURL(), nats.MaxReconnects(-1))
	cfg := RelayConfig{Stream: testenv.Name("LEDGER_T"), SubjectPrefix: testenv.Name("ledgert"), Replicas: 3}
	relay := NewRelay(pool, js, cfg, testLogger(t), nil)
	ensureClusteredStream(t, ctx, relay) // before the load and the step-downs start
	startRelay(t, relay)

	// Writers append tenants (three events each) as fast as they can, so
	// that rounds carry hundreds of messages.
	stop := make(chan struct{})
	var appended atomic.Int64
	var wg sync.WaitGroup
	stopWriters := sync.OnceFunc(func() { close(stop); wg.Wait() })
	t.Cleanup(stopWriters)
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				_, batches, err := tenantBatches()
				if err == nil {
					_, err = store.Append(ctx, domain.Metadata{}, batches...)
				}
				if err != nil {
					t.Errorf("append: %v", err)
					return
				}
				appended.Add(1)
			}
		})
	}
	stepDowns := 0 // those the API confirmed
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		if stepDown(js.Conn(), cfg.Stream) {
			stepDowns++
		}
	}
	stopWriters()
	if t.Failed() {
		return
	}
	if stepDowns == 0 {
		t.Fatal("the stream's leader never stepped down")
	}
	ids := waitPublished(t, ctx, pool, 90*time.Second)
	if got, want := len(ids), int(appended.Load())*3; got != want {
		t.Errorf("events: got %d, want %d", got, want)
	}
	checkExactlyOnceInOrder(t, readPublished(t, ctx, js, cfg.Stream), ids)
	t.Logf("%d events published across %d leader changes", len(ids), stepDowns)
}

// ensureClusteredStream creates the relay's stream and waits for its
// leader, trying until the cluster has elected its leaders (seconds on a
// busy machine).
func ensureClusteredStream(t *testing.T, ctx context.Context, r *Relay) {
	t.Helper()
	for {
		attempt, cancel := context.WithTimeout(ctx, 3*time.Second)
		s, err := r.EnsureStream(attempt)
		if err == nil {
			var info *jetstream.StreamInfo
			if info, err = s.Info(attempt); err == nil && (info.Cluster == nil || info.Cluster.Leader == "") {
				err = errors.New("no leader yet")
			}
		}
		cancel()
		if err == nil {
			return
		} else if ctx.Err() != nil {
			t.Fatalf("create the stream: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stepDown asks the stream's leader to step down and reports whether the
// JetStream API says it did.
func stepDown(nc *nats.Conn, stream string) bool {
	msg, err := nc.Request("$JS.API.STREAM.LEADER.STEPDOWN."+stream, nil, 2*time.Second)
	if err != nil {
		return false
	}
	var resp struct {
		Success bool `json:"success"`
	}
	return json.Unmarshal(msg.Data, &resp) == nil && resp.Success
}

// The relay counts on this (relay.go, "Both expectations"): on a stream of
// three replicas, a message whose expected last sequence is wrong is
// refused before it enters the stream's log, even when its expected last
// id is wrong too, and the stream goes on taking the messages that follow
// its last one.
func TestClusteredStreamRefusesAWrongSequenceCleanly(t *testing.T) {
	t.Parallel()
	ctx := testenv.Context(t, time.Minute)
	servers := startNATSCluster(t, 3)
	js := mustJetStream(t, servers[0].ClientURL())
	cfg := RelayConfig{Stream: testenv.Name("LEDGER_T"), SubjectPrefix: testenv.Name("ledgert"), Replicas: 3}
	ensureClusteredStream(t, ctx, NewRelay(nil, js, cfg, testLogger(t), nil))
	publish := func(id string, lastSeq uint64, lastID string) (uint64, error) {
		opts := []jetstream.PublishOpt{jetstream.WithMsgID(id), jetstream.WithExpectLastSequence(lastSeq)}
		if lastID != "" {
			opts = append(opts, jetstream.WithExpectLastMsgID(lastID))
		}
		ack, err := js.Publish(ctx, cfg.SubjectPrefix+".x", []byte(id), opts...)
		if err != nil {
			return 0, err
		}
		return ack.Sequence, nil
	}
	if seq, err := publish("a", 0, ""); err != nil || seq != 1 {
		t.Fatalf("a: got %d, %v", seq, err)
	}
	if seq, err := publish("b", 1, "a"); err != nil || seq != 2 {
		t.Fatalf("b: got %d, %v", seq, err)
	}
	if _, err := publish("c", 1, "a"); !isWrongLast(err) {
		t.Fatalf("c, expecting a and sequence 1 after b: got %v, want a wrong-last refusal", err)
	}
	if seq, err := publish("d", 2, "b"); err != nil || seq != 3 {
		t.Fatalf("d, after the refusal: got %d, %v, want sequence 3", seq, err)
	}
}
