package workers

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"
	dto "github.com/prometheus/client_model/go"

	"github.com/ledger/ledger/eventstore/testenv"
)

// The per-event lifecycle durables start where the single durable of
// earlier versions had acknowledged up to, and that one is deleted once
// they all exist; on a stream without it they start at the beginning.
func TestLifecycleDurablesTakeOverFromTheSingleOne(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	js := testenv.JetStream(t)
	for _, withOld := range []bool{true, false} {
		s := createTestStream(ctx, t, js)
		tenant, p1, p2, p3 := uuid.New(), uuid.New(), uuid.New(), uuid.New()
		for _, m := range []struct {
			payment uuid.UUID
			event   string
		}{{p1, "deposited"}, {p1, "webhook_attempted"}, {p1, "transferring"}, // acknowledged by the old durable
			{p2, "deposited"}, {p2, "transferring"}, {p3, "document_attached"}, {p3, "webhook_attempted"}} {
			subject := s.SubjectPrefix + "." + tenant.String() + ".payment." + m.payment.String() + "." + m.event
			if _, err := js.Publish(ctx, subject, []byte("{}")); err != nil {
				t.Fatal(err)
			}
		}
		if withOld {
			old, err := js.CreateConsumer(ctx, s.Name, jetstream.ConsumerConfig{Durable: lifecycleReplaces,
				FilterSubject: s.SubjectPrefix + ".*.payment.>", AckPolicy: jetstream.AckExplicitPolicy})
			if err != nil {
				t.Fatal(err)
			}
			batch, err := old.Fetch(3)
			if err != nil {
				t.Fatal(err)
			}
			for m := range batch.Messages() {
				if err := m.DoubleAck(ctx); err != nil {
					t.Fatal(err)
				}
			}
		}
		w := &Workers{cfg: Config{Stream: s.Name, SubjectPrefix: s.SubjectPrefix}, log: slog.New(slog.DiscardHandler)}
		var names []string
		for range 2 { // a second process, or a restart, finds them as they are
			names = nil
			for _, c := range w.lifecycleConsumers() {
				names = append(names, c.name)
				cons, err := c.ensure(ctx, js)
				if err != nil {
					t.Fatalf("ensure %s: %v", c.name, err)
				}
				info, err := cons.Info(ctx)
				if err != nil {
					t.Fatal(err)
				}
				// Messages of each one's event: after the old durable's ack floor (3), or all.
				wantPending := map[string]uint64{"lifecycle_deposited": 1, "lifecycle_transferring": 1,
					"lifecycle_document_attached": 1}[c.name]
				wantStart := uint64(4)
				if !withOld {
					wantPending = map[string]uint64{"lifecycle_deposited": 2, "lifecycle_transferring": 2,
						"lifecycle_document_attached": 1}[c.name]
					wantStart = 0
				}
				if info.Config.OptStartSeq != wantStart || info.NumPending != wantPending {
					t.Fatalf("withOld %v: %s starts at %d with %d pending, want %d and %d",
						withOld, c.name, info.Config.OptStartSeq, info.NumPending, wantStart, wantPending)
				}
			}
		}
		retireDurable(ctx, js, s.Name, lifecycleReplaces, names, w.log)
		if _, err := js.Consumer(ctx, s.Name, lifecycleReplaces); !errors.Is(err, jetstream.ErrConsumerNotFound) {
			t.Fatalf("withOld %v: the old durable after retiring it: %v", withOld, err)
		}
	}
}

// A worker whose durable is deleted under it creates it again and goes on
// handling messages, instead of pulling from a durable that is gone.
func TestConsumerCreatesItsDurableAgain(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	js := testenv.JetStream(t)
	s := createTestStream(ctx, t, js)
	handled := make(chan string, 10)
	c := runTestConsumer(ctx, t, js, s, 2, func(_ context.Context, subject string) error { handled <- subject; return nil })
	waitFor := func(subject string) {
		t.Helper()
		for {
			select {
			case got := <-handled:
				if got == subject {
					return
				}
			case <-ctx.Done():
				t.Fatalf("%s was never handled", subject)
			}
		}
	}
	first, second := s.SubjectPrefix+".first", s.SubjectPrefix+".second"
	if _, err := js.Publish(ctx, first, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(first)
	if err := js.DeleteConsumer(ctx, s.Name, c.name); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, second, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(second)
}

// A message that is still early on its last delivery is parked as a dead
// letter, not handed back: JetStream would never deliver it again, and
// nothing would say so.
func TestConsumerParksAnEarlyMessageOnItsLastDelivery(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	js := testenv.JetStream(t)
	s := createTestStream(ctx, t, js)
	deliveries := make(chan struct{}, 10)
	c := runTestConsumer(ctx, t, js, s, 1, func(context.Context, string) error {
		deliveries <- struct{}{}
		return retryLater(10 * time.Millisecond)
	})
	if _, err := js.Publish(ctx, s.SubjectPrefix+".early", nil); err != nil {
		t.Fatal(err)
	}
	for range c.maxDeliver {
		select {
		case <-deliveries:
		case <-ctx.Done():
			t.Fatalf("fewer than %d deliveries", c.maxDeliver)
		}
	}
	deadLetters := func() float64 {
		var m dto.Metric
		if err := c.metrics.deadLetters.WithLabelValues(c.name).Write(&m); err != nil {
			t.Fatal(err)
		}
		return m.GetCounter().GetValue()
	}
	for deadLetters() != 1 {
		if ctx.Err() != nil {
			t.Fatal("the early message was never parked as a dead letter")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// runTestConsumer runs a consumer ("test_worker", three deliveries at most)
// of every subject of s with handle until ctx ends, and waits for it when t
// ends.
func runTestConsumer(ctx context.Context, t *testing.T, js jetstream.JetStream, s testenv.Stream, concurrency int,
	handle func(context.Context, string) error) *consumer {
	c := &consumer{
		name: "test_worker", stream: s.Name, filter: s.SubjectPrefix + ".>", maxDeliver: 3, concurrency: concurrency,
		handle: handle, log: slog.New(slog.DiscardHandler), metrics: newMetrics(nil),
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { c.run(runCtx, js); close(done) }()
	t.Cleanup(func() { stop(); <-done })
	return c
}

// createTestStream creates an in-memory stream of t's own on every
// subject of its prefix (testenv deletes it when t ends).
func createTestStream(ctx context.Context, t *testing.T, js jetstream.JetStream) testenv.Stream {
	t.Helper()
	s := testenv.NewStream(t)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: s.Name, Subjects: []string{s.SubjectPrefix + ".>"},
		Storage: jetstream.MemoryStorage}); err != nil {
		t.Fatal(err)
	}
	return s
}
