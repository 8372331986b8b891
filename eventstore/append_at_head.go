package eventstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ledger/ledger/domain"
)

// headRetries bounds AppendAtHead's retries after losing a version to a
// concurrent writer of the same stream. Each loss means another append
// committed in the meantime, so the bound is only reached by a stream
// written faster than one append can go through.
const headRetries = 20

// appendEventsAtHead inserts events after the stream's last version, read
// in the statement itself by a one-entry backward scan of UNIQUE
// (stream_id, stream_version). A stream absent from tenant $1 has no last
// version: the rows' version is NULL, which the table's NOT NULL refuses
// (23502, isMissingStream). Plain SQL rather than plpgsql, for the reason
// appendEvents gives.
const appendEventsAtHead = `INSERT INTO events (id, tenant_id, stream_type, stream_id, stream_version, type, schema_version, data, metadata, recorded_at)
	SELECT r.id, $1, $2, $3, h.version + r.n::integer, r.type, r.schema_version, r.data, r.metadata, $4
	FROM (SELECT (SELECT stream_version FROM events WHERE stream_id = $3 AND tenant_id = $1
			ORDER BY stream_version DESC LIMIT 1) AS version) AS h,
		unnest($5::uuid[], $6::text[], $7::int[], $8::json[], $9::json[]) WITH ORDINALITY
			AS r(id, type, schema_version, data, metadata, n)`

// appendEventAtHead is appendEventsAtHead for one event, with scalar
// parameters (appendEvent says why).
const appendEventAtHead = `INSERT INTO events (id, tenant_id, stream_type, stream_id, stream_version, type, schema_version, data, metadata, recorded_at)
	VALUES ($5, $1, $2, $3,
		(SELECT stream_version FROM events WHERE stream_id = $3 AND tenant_id = $1 ORDER BY stream_version DESC LIMIT 1) + 1,
		$6, $7, $8::json, $9::json, $4)`

// AppendAtHead appends events after whatever stream holds when the append
// runs, with their read-model updates, in one round trip and without reading
// the stream first: for facts that are true whatever the stream's state (a
// webhook attempt happened), where Append's optimistic check would only cost
// a read and, under load, conflicts with the stream's other writers. The
// versions stay one per event, with no gap; a race for the same version is
// retried here. The projection sees the records with StreamVersion 0 (the
// database assigns them), which StateIndependent events' projections do
// not use. A stream that does not exist in stream.TenantID is NotFound.
func (s *Store) AppendAtHead(ctx context.Context, meta domain.Metadata, stream domain.StreamRef, events ...domain.StateIndependent) error {
	if len(events) == 0 {
		return nil
	}
	start := s.now()
	recs := make([]domain.Record, len(events))
	var c eventColumns // the versions are the database's to assign: not sent
	for i, e := range events {
		id, err := uuid.NewV7()
		if err != nil {
			return fmt.Errorf("event id: %w", err)
		}
		if recs[i], err = domain.NewRecord(stream, 0, e, meta, id, start); err != nil {
			return err
		}
		if err := c.add(recs[i]); err != nil {
			return err
		}
	}
	unlock, err := s.lockStream(ctx, stream.ID)
	if err != nil {
		return err
	}
	defer unlock()
	for try := 0; ; try++ {
		// A batch is built afresh for each try: a sent one keeps the
		// statement descriptions of the connection it ran on.
		b := &pgx.Batch{}
		if len(recs) == 1 {
			b.Queue(appendEventAtHead, stream.TenantID, stream.Type, stream.ID, recs[0].RecordedAt, c.ids[0], c.types[0], c.schemas[0], c.datas[0], c.metas[0])
		} else {
			b.Queue(appendEventsAtHead, stream.TenantID, stream.Type, stream.ID, recs[0].RecordedAt, c.ids, c.types, c.schemas, c.datas, c.metas)
		}
		if err := s.projector.ProjectAttempts(b, recs); err != nil {
			return err
		}
		err := s.send(ctx, b, 1, stream.ID)
		switch {
		case err == nil:
			s.appendCommitted(ctx)
			s.appendDur.Observe(s.now().Sub(start).Seconds())
			return nil
		case isMissingStream(err):
			return &domain.Error{Kind: domain.NotFound, Code: "not_found",
				Message: fmt.Sprintf("the %s does not exist", stream.Type), Err: err}
		case !errors.Is(err, ErrVersionConflict) || try >= headRetries || ctx.Err() != nil:
			return err
		}
		// Another writer of the stream committed first. Retrying at once
		// races the same writers again; a random pause, up to a millisecond
		// more each time, spreads the at-head writers of a busy stream out
		// (twenty writers of one stream under the race detector lost 21
		// times in a row without it).
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(rand.N(time.Duration(try+1) * time.Millisecond)):
		}
	}
}

// isMissingStream reports appendEventsAtHead's refusal of a stream that
// does not exist (its rows' version is NULL).
func isMissingStream(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23502" && pgErr.ColumnName == "stream_version"
}
