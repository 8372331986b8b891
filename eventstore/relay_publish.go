package eventstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore/eventrow"
)

// inflight is a round's messages sent to JetStream whose acknowledgements
// the relay has not collected yet.
type inflight struct {
	recs    []domain.Record // in position order; futures[i] is recs[i]'s
	futures []jetstream.PubAckFuture
	sendErr error // why sending stopped before the end of recs
	stale   bool  // published_position moved under the relay since: only wait for it
}

// send publishes the next batch of sequenced events after pubPos, without
// waiting for JetStream's acknowledgements: finish, in the next round,
// collects them. When everything before the round rd was published, those
// are the records rd just sequenced, sent straight from memory; otherwise
// (catching up after a restart, a NATS outage or a reconcile) they are read
// from the events table. It returns how many messages it sent.
func (l *leadership) send(ctx context.Context, rd round) (int, error) {
	if !l.streamReady || l.lastPos != l.pubPos {
		// The first publish of a leadership, or after a failed publish, or
		// after published_position moved under the relay: the stream's
		// last message says where to go on from, not published_position,
		// which trails JetStream by up to two rounds (and JetStream may
		// have lost its tail, or the stream been made anew), and its last
		// message's id and sequence are what the next one follows. Sending from
		// published_position and counting on JetStream to refuse what does
		// not follow the stream's last message is not enough: a clustered
		// stream of nats-server 2.15 takes such a message, fails it on
		// every replica when they apply it, and then takes nothing more.
		if err := l.reconcile(ctx); err != nil {
			return 0, err
		}
		l.streamReady = true
	}
	published := l.pubPos
	recs := rd.recs
	if published != rd.prevLast || len(recs) == 0 {
		rows, err := l.conn.Query(ctx, `SELECT `+recordColumns+` FROM events WHERE position > $1 ORDER BY position LIMIT $2`,
			published, l.cfg.BatchSize)
		if err != nil {
			return 0, pgxError{fmt.Errorf("read events to publish: %w", err)}
		}
		if recs, err = pgx.CollectRows(rows, eventrow.Scan); err != nil {
			return 0, pgxError{err}
		}
	}
	if len(recs) == 0 {
		return 0, nil
	}
	fl := &inflight{recs: recs, futures: make([]jetstream.PubAckFuture, 0, len(recs))}
	expected := l.lastID // "": nothing published yet, or the stream ends with a foreign message
	for i, rec := range recs {
		msg, err := l.message(rec)
		if err != nil {
			return 0, unpublishableError{err}
		}
		opts := []jetstream.PublishOpt{jetstream.WithMsgID(rec.ID.String()), jetstream.WithExpectStream(l.cfg.Stream),
			jetstream.WithExpectLastSequence(l.lastSeq + uint64(i))}
		if expected != "" {
			opts = append(opts, jetstream.WithExpectLastMsgID(expected))
		}
		f, err := l.js.PublishMsgAsync(msg, opts...)
		if err != nil {
			fl.sendErr = err
			break
		}
		fl.futures = append(fl.futures, f)
		expected = rec.ID.String()
	}
	l.inflight = fl
	return len(fl.futures), nil
}

// finish waits for the acknowledgements of the messages in flight and moves
// pubPos to the last of the leading messages JetStream stored; the next
// sequencing transaction marks it. It returns how many were acknowledged.
func (l *leadership) finish(ctx context.Context) (int, error) {
	fl := l.inflight
	l.inflight = nil
	acked, ackedSeq, ackErr := l.awaitAcks(ctx, fl.futures, fl.recs)
	if l.afterPublish != nil {
		l.afterPublish()
	}
	if acked > 0 {
		l.published.Add(float64(acked))
	}
	if fl.stale { // published_position was moved under the relay: go on from there, not from these
		return acked, nil
	}
	if acked > 0 {
		last := fl.recs[acked-1]
		l.pubPos, l.lastID, l.lastPos, l.lastSeq = last.Position, last.ID.String(), last.Position, ackedSeq
	}
	if err := errors.Join(ackErr, fl.sendErr); err != nil {
		if isWrongLast(err) {
			if rerr := l.reconcile(ctx); rerr != nil {
				return acked, rerr
			}
		}
		return acked, err
	}
	return acked, nil
}

// awaitAcks waits for the futures in order and returns how many leading
// messages JetStream stored (or already had) and the stream sequence of the
// last of them, with the first error.
func (l *leadership) awaitAcks(ctx context.Context, futures []jetstream.PubAckFuture, recs []domain.Record) (acked int, seq uint64, err error) {
	timeout := time.After(10 * time.Second)
	for i, f := range futures {
		select {
		case ack := <-f.Ok():
			if acked == i {
				acked++
				seq = ack.Sequence
				l.lag.Observe(time.Since(recs[i].RecordedAt).Seconds())
			}
		case err := <-f.Err():
			if acked == i {
				return acked, seq, fmt.Errorf("publish %s: %w", recs[i].ID, err)
			}
		case <-timeout:
			return acked, seq, errors.New("publish: timed out waiting for JetStream acknowledgements")
		case <-ctx.Done():
			return acked, seq, ctx.Err()
		}
	}
	return acked, seq, nil
}

// isWrongLast reports whether JetStream rejected a message because the
// stream's last message was not the one expected: by id or by sequence.
func isWrongLast(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) &&
		(apiErr.ErrorCode == 10070 || // JSStreamWrongLastMsgIDErrF
			apiErr.ErrorCode == 10071) // JSStreamWrongLastSequenceErrF
}
