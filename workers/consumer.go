package workers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
)

// consumer runs one JetStream durable pull consumer: several processes
// using the same durable name share its messages, each message is handled
// until acknowledged, and a message that keeps failing is parked (Term)
// with a log line and a metric instead of blocking the stream.
type consumer struct {
	name        string    // the durable name: never rename it, a new name replays the stream
	replaces    string    // a durable this one takes over from (see ensure); "": none
	startAt     time.Time // a new durable starts with the messages published since, not at the stream's start; zero: at the start
	stream      string
	filter      string
	maxDeliver  int
	concurrency int // messages handled at once, so one slow message does not hold the others
	handle      func(ctx context.Context, subject string) error
	log         *slog.Logger
	metrics     *metrics
}

// maxAckPending bounds the messages of a durable delivered and not yet
// acknowledged. It is not what bounds the work (the handlers' slots and the
// fetch size do): a message handed back for later (retryLater: a
// transferring payment within its PayoutGrace) stays pending until then,
// and at 4 per slot, as it was, the transferring durable sat at its bound
// (32) in the lifecycle benchmark, delivering nothing more until those
// waits ran out.
const maxAckPending = 1024

// ensure creates the durable, or updates the settings of the one that
// exists. Where a durable starts is fixed when it is created: a new one
// starts at the beginning of the stream, unless it replaces an older
// durable, and then just after the messages that one acknowledged (its ack
// floor), so a new set of durables neither skips a message the old one had
// not finished nor replays the whole history. Messages the old one
// acknowledged beyond its floor come again; every handler is idempotent.
// Several processes may create it at once: a loser finds it on its retry.
func (c *consumer) ensure(ctx context.Context, js jetstream.JetStream) (jetstream.Consumer, error) {
	cfg := jetstream.ConsumerConfig{
		Durable: c.name, FilterSubject: c.filter, AckPolicy: jetstream.AckExplicitPolicy,
		AckWait: 30 * time.Second, MaxDeliver: c.maxDeliver, MaxAckPending: maxAckPending,
		DeliverPolicy: jetstream.DeliverAllPolicy,
	}
	cur, err := js.Consumer(ctx, c.stream, c.name)
	if err == nil {
		info := cur.CachedInfo()
		cfg.DeliverPolicy, cfg.OptStartSeq, cfg.OptStartTime = info.Config.DeliverPolicy, info.Config.OptStartSeq, info.Config.OptStartTime
		return js.UpdateConsumer(ctx, c.stream, cfg)
	}
	if !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return nil, err
	}
	if !c.startAt.IsZero() {
		cfg.DeliverPolicy, cfg.OptStartTime = jetstream.DeliverByStartTimePolicy, &c.startAt
	}
	if c.replaces != "" {
		old, err := js.Consumer(ctx, c.stream, c.replaces)
		switch {
		case err == nil:
			cfg.DeliverPolicy = jetstream.DeliverByStartSequencePolicy
			cfg.OptStartSeq = old.CachedInfo().AckFloor.Stream + 1
		case !errors.Is(err, jetstream.ErrConsumerNotFound):
			return nil, err
		}
	}
	return js.CreateConsumer(ctx, c.stream, cfg)
}

// retireDurable deletes the durable old once every one of replacements
// exists: each of them has then taken its starting point from old's ack
// floor. It waits for them (they are created by this process's consumers,
// or by another process's) and gives up only when ctx ends.
func retireDurable(ctx context.Context, js jetstream.JetStream, stream, old string, replacements []string, log *slog.Logger) {
	for {
		err := func() error {
			for _, name := range replacements {
				if _, err := js.Consumer(ctx, stream, name); err != nil {
					return err
				}
			}
			if err := js.DeleteConsumer(ctx, stream, old); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
				return err
			}
			return nil
		}()
		if err == nil {
			return
		}
		if !errors.Is(err, jetstream.ErrConsumerNotFound) && !errors.Is(err, jetstream.ErrStreamNotFound) && ctx.Err() == nil {
			log.Warn("worker: retire durable", "consumer", old, "err", err)
		}
		if !waitToRetry(ctx) {
			return
		}
	}
}

// waitToRetry waits a second before a JetStream call is tried again, and
// reports false when ctx ended first.
func waitToRetry(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(time.Second):
		return true
	}
}

// backoff is the wait before redelivering a message that failed n times.
func backoff(n uint64) time.Duration {
	d := 100 * time.Millisecond << min(n, 8)
	return min(d, 30*time.Second)
}

// run consumes until ctx ends. It waits for the stream (the relay's leader
// creates it) rather than failing, and creates the durable again if it
// disappears (an operator deleted it, the stream was re-created): a pull
// for a durable that does not exist gets no answer at all, so an idle
// fetch checks that it is still there.
func (c *consumer) run(ctx context.Context, js jetstream.JetStream) error {
	slots := make(chan struct{}, c.concurrency)
	var wg sync.WaitGroup
	defer wg.Wait()
	handle := func(m jetstream.Msg) {
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			c.process(ctx, m)
		}()
	}
	for {
		cons := c.durable(ctx, js)
		if cons == nil {
			return nil
		}
		c.consume(ctx, cons, handle)
	}
}

// consume fetches cons's messages for handle until ctx ends or the
// durable is gone.
func (c *consumer) consume(ctx context.Context, cons jetstream.Consumer, handle func(jetstream.Msg)) {
	for ctx.Err() == nil {
		n, err := c.fetch(ctx, cons, handle)
		if err == nil && n == 0 {
			_, err = cons.Info(ctx)
		}
		switch {
		case errors.Is(err, jetstream.ErrConsumerNotFound) || errors.Is(err, jetstream.ErrConsumerDeleted):
			c.log.Warn("worker: the durable consumer is gone; creating it again", "consumer", c.name)
			return
		case err != nil && ctx.Err() == nil:
			c.log.Warn("worker: fetch", "consumer", c.name, "err", err)
			waitToRetry(ctx)
		}
	}
}

// durable ensures the durable, retrying every second until it succeeds;
// nil when ctx ends first.
func (c *consumer) durable(ctx context.Context, js jetstream.JetStream) jetstream.Consumer {
	for {
		cons, err := c.ensure(ctx, js)
		if err == nil {
			return cons
		}
		if ctx.Err() != nil {
			return nil
		}
		if !errors.Is(err, jetstream.ErrStreamNotFound) && !errors.Is(err, jetstream.ErrConsumerExists) {
			c.log.Warn("worker: create consumer", "consumer", c.name, "err", err)
		}
		if !waitToRetry(ctx) {
			return nil
		}
	}
}

// fetchWait is how long one pull request waits on the server for
// messages: an idle consumer asks again this often.
const fetchWait = 5 * time.Second

// fetch pulls one batch, hands its messages to handle as they arrive and
// says how many there were. Each batch is one pull request of its own,
// with its own expiry, rather than Consume's long-lived subscription:
// under load (a handler blocked on busy slots while heartbeats and request
// timeouts queue behind it), Consume's count of the messages it has asked
// for drifted here, and it stopped asking with thousands pending until its
// heartbeat check fired tens of seconds later. A fetch that goes wrong
// costs one batch's wait. Messages left undelivered by a shutdown are
// redelivered after AckWait.
func (c *consumer) fetch(ctx context.Context, cons jetstream.Consumer, handle func(jetstream.Msg)) (int, error) {
	fctx, cancel := context.WithTimeout(ctx, fetchWait)
	defer cancel()
	batch, err := cons.Fetch(2*c.concurrency, jetstream.FetchContext(fctx))
	if err != nil {
		return 0, err
	}
	n := 0
	for m := range batch.Messages() {
		handle(m)
		n++
	}
	if err := batch.Error(); err != nil && ctx.Err() == nil && !errors.Is(err, context.DeadlineExceeded) {
		return n, err
	}
	return n, nil
}

// process handles one message: ack on success, a delayed nak on failure
// or when the message is early, and on the last delivery a Term that parks
// it as a dead letter, early or not: JetStream delivers no message more
// than MaxDeliver times, so a nak then would drop it without a word.
func (c *consumer) process(ctx context.Context, m jetstream.Msg) {
	start := time.Now()
	err := c.handle(context.WithoutCancel(ctx), m.Subject())
	c.metrics.handled.WithLabelValues(c.name, outcome(err)).Observe(time.Since(start).Seconds())
	if err == nil {
		_ = m.Ack()
		return
	}
	md, mdErr := m.Metadata()
	last := mdErr == nil && int(md.NumDelivered) >= c.maxDeliver
	var later retryLater
	if errors.As(err, &later) && !last { // not a failure: the message is early
		_ = m.NakWithDelay(time.Duration(later))
		return
	}
	if last {
		c.metrics.deadLetters.WithLabelValues(c.name).Inc()
		c.log.Error("worker: dead letter: giving up on a message", "consumer", c.name, "subject", m.Subject(),
			"deliveries", md.NumDelivered, "streamSeq", md.Sequence.Stream, "err", err)
		_ = m.Term()
		return
	}
	var n uint64 = 1
	if mdErr == nil {
		n = md.NumDelivered
	}
	c.log.Warn("worker: will retry", "consumer", c.name, "subject", m.Subject(), "delivery", n, "err", err)
	_ = m.NakWithDelay(backoff(n))
}

// retryLater is a handler's answer that its message came too early: it is
// handed back to be delivered again after that long, with no warning.
type retryLater time.Duration

func (r retryLater) Error() string { return fmt.Sprintf("retry in %s", time.Duration(r)) }

func outcome(err error) string {
	var later retryLater
	switch {
	case errors.As(err, &later):
		return "later"
	case err != nil:
		return "error"
	}
	return "ok"
}

// subjectParts splits ledger.<tenant>.<aggregate>.<id>.<event> (the
// prefix may be any single token).
func subjectParts(subject string) (tenant, aggregate, id, event string, ok bool) {
	parts := strings.Split(subject, ".")
	if len(parts) < 5 {
		return "", "", "", "", false
	}
	n := len(parts)
	return parts[n-4], parts[n-3], parts[n-2], parts[n-1], true
}

// paymentSubject reads the tenant, payment and event of a payment event's
// subject; ok is false for any other subject, or one whose ids this
// service did not write: nothing to do, and retrying will not help.
func paymentSubject(subject string) (tenantID, paymentID uuid.UUID, event string, ok bool) {
	tenant, aggregate, id, event, ok := subjectParts(subject)
	if !ok || aggregate != "payment" {
		return uuid.Nil, uuid.Nil, "", false
	}
	tenantID, err1 := uuid.Parse(tenant)
	paymentID, err2 := uuid.Parse(id)
	return tenantID, paymentID, event, err1 == nil && err2 == nil
}

// metrics are the workers' Prometheus series.
type metrics struct {
	handled     *prometheus.HistogramVec
	deadLetters *prometheus.CounterVec
	webhooks    *prometheus.CounterVec
	expired     prometheus.Counter
	stalled     prometheus.Counter
	fastPath    *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		handled: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "ledger_worker_message_seconds",
			Help: "Time to handle a JetStream message, by consumer and outcome."}, []string{"consumer", "outcome"}),
		deadLetters: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ledger_worker_dead_letters_total",
			Help: "Messages a worker gave up on after its last delivery (see the log for each)."}, []string{"consumer"}),
		webhooks: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ledger_webhook_attempts_total",
			Help: "Webhook delivery attempts by outcome."}, []string{"outcome"}),
		expired: prometheus.NewCounter(prometheus.CounterOpts{Name: "ledger_payments_expired_total",
			Help: "Payments this process expired."}),
		stalled: prometheus.NewCounter(prometheus.CounterOpts{Name: "ledger_payments_stalled_total",
			Help: "Steps this process ran for payments that had not moved for LEDGER_STALLED_AFTER (their message given up on)."}),
		fastPath: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ledger_worker_fast_path_total",
			Help: "Payment steps offered to this process's fast path (payout, webhook), queued or dropped (the queue was full: the message or the dispatcher takes the step); webhook no_slot: queued, then every send slot was taken (LEDGER_WEBHOOK_SENDS): the dispatcher sends it."},
			[]string{"step", "outcome"}),
	}
	if reg != nil {
		reg.MustRegister(m.handled, m.deadLetters, m.webhooks, m.expired, m.stalled, m.fastPath)
	}
	return m
}
