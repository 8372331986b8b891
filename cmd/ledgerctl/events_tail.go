package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// events tail is the reference example of an analytics consumer: it follows
// the ledger's JetStream stream and prints every event it receives. A real
// consumer replaces the printing with its own processing; the rest carries
// over as it is.
//
// What a consumer can rely on (contract §9, docs/events.md):
//   - each message's data is one event, a CloudEvents 1.0 JSON envelope,
//     with personal data left out; its id (also the Nats-Msg-Id header) is
//     unique, its position orders all events, and its streamversion orders
//     one aggregate's events;
//   - the subject is ledger.<tenantId>.<aggregate>.<aggregateId>.<event>, so
//     a filter picks a tenant, an aggregate type or one aggregate:
//     ledger.<tenantId>.payment.> is one tenant's payment events;
//   - delivery is at least once: a message whose acknowledgement was lost
//     comes again, so processing must be idempotent (remember the ids, or
//     the last position, of what was processed).

const tailHelp = `usage: ledgerctl events tail [flags]

Follows the JetStream stream of the ledger's events and prints each message's
data, the published CloudEvent (personal data left out), as one JSON line,
then acknowledges it; stops cleanly on Ctrl-C (SIGINT) or SIGTERM.

Without --durable the consumer is ephemeral: it starts with the events
published from now on (all the stream holds with --from-start), and the
server forgets it a few seconds after the tail stops. With --durable NAME the
server keeps the consumer and what it acknowledged, so the next tail with
the same NAME goes on where the last one stopped (--from-start only applies
when NAME is created; "nats consumer rm LEDGER NAME" deletes it).

NATS_URL is the server, as ledgerd's NATS_URL. Without it, the server is
the one a ledgerd started without NATS_URL embeds: LEDGER_EMBEDDED_NATS_ADDR
(default 127.0.0.1:4223), with the client token that ledgerd keeps in
LEDGER_DATA_DIR (default ./.ledger): run from ledgerd's working directory,
or give the same LEDGER_DATA_DIR.

Flags:
`

func eventsTail(ctx context.Context, _ *database, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("events tail", flag.ContinueOnError)
	subject := fs.String("subject", "ledger.>", "only the subjects matching `FILTER`, e.g. ledger.<tenantId>.payment.>")
	durable := fs.String("durable", "", "use the durable consumer `NAME`, created if needed, and resume where it stopped")
	fromStart := fs.Bool("from-start", false, "a new consumer starts with the stream's first event, not the next one")
	stream := fs.String("stream", "LEDGER", "the JetStream stream `STREAM`")
	if ok, err := parseEventsFlags(fs, tailHelp, args); !ok {
		return err
	}

	// Connect. The client reconnects by itself if the server restarts.
	server, err := eventsServer(os.Getenv)
	if err != nil {
		return fmt.Errorf("events tail: %w", err)
	}
	nc, err := nats.Connect(server.url, append(server.opts, nats.Name("ledgerctl events tail"))...)
	if err != nil {
		return fmt.Errorf("events tail: connect to %s: %w", server, err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("events tail: %w", err)
	}
	cons, err := tailConsumer(ctx, js, *stream, *subject, *durable, *fromStart)
	if err != nil {
		return fmt.Errorf("events tail: %s: %w", server, err)
	}
	fmt.Fprintf(os.Stderr, "events tail: following %s (%s) on %s with consumer %s; Ctrl-C to stop\n",
		*stream, *subject, server, cons.CachedInfo().Name)

	// Messages pulls messages ahead in the background. When ctx ends (Ctrl-C),
	// Drain stops pulling, and Next hands out what was already received
	// before reporting the end: no delivered message is left unacknowledged,
	// where it would only come again after the consumer's AckWait.
	msgs, err := cons.Messages()
	if err != nil {
		return fmt.Errorf("events tail: %w", err)
	}
	defer msgs.Stop()
	defer context.AfterFunc(ctx, msgs.Drain)()

	var line bytes.Buffer
	for {
		msg, err := msgs.Next()
		if errors.Is(err, jetstream.ErrMsgIteratorClosed) && ctx.Err() != nil {
			return nil // stopped by Ctrl-C, every message received handled
		}
		if err != nil {
			return fmt.Errorf("events tail: %w", err)
		}

		// Process: here, print the CloudEvent as one line. Compact also
		// checks it is JSON: anything else is not a ledger event, and Term
		// tells the server never to deliver it to this consumer again.
		line.Reset()
		if err := json.Compact(&line, msg.Data()); err != nil {
			fmt.Fprintf(os.Stderr, "events tail: %s: not a JSON event, skipped: %v\n", msg.Subject(), err)
			if err := msg.Term(); err != nil {
				return fmt.Errorf("events tail: %w", err)
			}
			continue
		}
		line.WriteByte('\n')
		if _, err := stdout.Write(line.Bytes()); err != nil {
			return fmt.Errorf("events tail: write: %w", err)
		}

		// Acknowledge, only once processed: a consumer that dies before this
		// gets the message again (at least once). DoubleAck waits for the
		// server to confirm, so an event acknowledged here never comes back to
		// a durable consumer after a restart; it costs a round trip per
		// message, and a consumer with high throughput would Ack without
		// waiting and rely on idempotent processing for the rare repeat. It
		// runs after ctx has ended too: the message was printed.
		ackCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		err = msg.DoubleAck(ackCtx)
		cancel()
		if err != nil {
			return fmt.Errorf("events tail: acknowledge %s: %w", msg.Subject(), err)
		}
	}
}

// tailConsumer returns the consumer to read from: the durable one named
// durable, created if it does not exist yet, or a new ephemeral one when
// durable is empty. Every message must be acknowledged (AckExplicit).
func tailConsumer(ctx context.Context, js jetstream.JetStream, stream, subject, durable string, fromStart bool) (jetstream.Consumer, error) {
	s, err := js.Stream(ctx, stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, fmt.Errorf("stream %s: %w (ledgerd publishes to its LEDGER_NATS_STREAM; --stream names another)", stream, err)
	}
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", stream, err)
	}
	if durable != "" {
		// An existing durable consumer resumes where it stopped: the server
		// remembers what it acknowledged. Its filter is kept, not changed.
		c, err := s.Consumer(ctx, durable)
		if err == nil {
			if f := c.CachedInfo().Config.FilterSubject; f != subject {
				return nil, fmt.Errorf("durable consumer %s follows %q, not %q: give its subject, or another name", durable, f, subject)
			}
			return c, nil
		}
		if !errors.Is(err, jetstream.ErrConsumerNotFound) {
			return nil, fmt.Errorf("consumer %s: %w", durable, err)
		}
	}
	cfg := jetstream.ConsumerConfig{
		Durable:       durable, // "": ephemeral, removed by the server once unused for a few seconds
		FilterSubject: subject,
		AckPolicy:     jetstream.AckExplicitPolicy,
		DeliverPolicy: jetstream.DeliverNewPolicy, // the events published from now on
	}
	if fromStart {
		cfg.DeliverPolicy = jetstream.DeliverAllPolicy // everything the stream holds
	}
	c, err := s.CreateConsumer(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("create consumer: %w", err)
	}
	return c, nil
}
