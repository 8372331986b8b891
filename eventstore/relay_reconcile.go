package eventstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats.go/jetstream"
)

// checkStream reconciles with the stream when it no longer ends where this
// relay left it: fewer messages (JetStream lost acknowledged ones), more
// (something else published), or none at all (deleted): published_position
// then goes back to the stream's last event, and the next round publishes
// again whatever the stream lacks.
func (l *leadership) checkStream(ctx context.Context) error {
	if !l.streamReady || l.lastPos != l.pubPos {
		return nil // the next publish reconciles anyway
	}
	stream, err := l.js.Stream(ctx, l.cfg.Stream) // one STREAM.INFO request, kept as its CachedInfo
	var lastSeq uint64
	if err == nil {
		lastSeq = stream.CachedInfo().State.LastSeq
	}
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound):
	case err != nil:
		return fmt.Errorf("stream info: %w", err)
	case lastSeq == l.lastSeq:
		return nil
	}
	l.log.Warn("relay: the stream no longer ends where it was left; reconciling", "stream", l.cfg.Stream,
		"lastSeq", lastSeq, "expected", l.lastSeq, "err", err)
	return l.reconcile(ctx)
}

// reconcile resets published_position to the event that is really the
// stream's last message: forward after a crash between publish and marking,
// backward if JetStream lost acknowledged messages (Postgres is the source of
// truth, so they are published again). A new, empty stream gets everything.
func (l *leadership) reconcile(ctx context.Context) error {
	stream, err := l.EnsureStream(ctx)
	if err != nil {
		return err
	}
	info, err := stream.Info(ctx)
	if err != nil {
		return fmt.Errorf("stream info: %w", err)
	}
	var position int64
	lastID := ""
	if info.State.LastSeq > 0 {
		msg, err := stream.GetMsg(ctx, info.State.LastSeq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			// Purged or deleted by an operator: nothing to compare with.
			// Postgres's published_position stands, and the next message
			// expects the stream's last sequence, so none slips in between.
			l.log.Warn("relay: the stream's last message is gone; publishing on after published_position",
				"stream", l.cfg.Stream, "seq", info.State.LastSeq, "publishedPosition", l.pubPos)
			l.lastID, l.lastSeq, l.lastPos = "", info.State.LastSeq, l.pubPos
			return nil
		}
		if err != nil {
			return fmt.Errorf("read stream's last message: %w", err)
		}
		lastID = msg.Header.Get(jetstream.MsgIDHeader)
		id, perr := uuid.Parse(lastID)
		err = perr
		if perr == nil {
			err = l.conn.QueryRow(ctx, `SELECT position FROM events WHERE id = $1 AND position IS NOT NULL`, id).Scan(&position)
		}
		if perr != nil || errors.Is(err, pgx.ErrNoRows) {
			l.log.Error("relay: the stream's last message is not a ledger event; publishing on after it",
				"stream", l.cfg.Stream, "msgId", lastID, "seq", info.State.LastSeq)
			l.lastID, l.lastSeq, l.lastPos = "", info.State.LastSeq, l.pubPos // send expects that sequence
			return nil
		}
		if err != nil {
			return pgxError{fmt.Errorf("find stream's last event: %w", err)}
		}
	}
	if _, err := l.conn.Exec(ctx, `UPDATE sequencer_state SET published_position = $1 WHERE id = 1`, position); err != nil {
		return pgxError{fmt.Errorf("reset published position: %w", err)}
	}
	level := slog.LevelInfo // the usual takeover: published_position was where the stream ends
	if position != l.pubPos {
		level = slog.LevelWarn
	}
	l.log.Log(ctx, level, "relay: reconciled with the stream", "publishedPosition", position, "was", l.pubPos, "lastMsgId", lastID)
	l.lastID, l.lastPos, l.lastSeq = lastID, position, info.State.LastSeq
	l.pubPos, l.markedPos = position, position
	return nil
}
