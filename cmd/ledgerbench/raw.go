package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledger/ledger/domain"
)

// createRawTable is the baseline's table: one bigserial key and one json
// column (the type of the events' data, migration 0010), no other index,
// constraint or trigger. A single-row INSERT into it at a given concurrency
// is the most this machine's Postgres can commit, so append/raw says how
// much of that the event store's write path keeps.
const createRawTable = `CREATE TABLE raw_inserts (id bigserial primary key, data json not null)`

const insertRaw = `INSERT INTO raw_inserts (data) VALUES ($1)`

// rawPayload returns a JSON document as large as one appended event's row:
// the CloudEvent envelope of a record like those the append phase writes,
// which carries the same ids, type, time, data and metadata as the events
// row. Using the event's own size keeps the baseline from looking fast
// merely because its rows are smaller.
func rawPayload(meta domain.Metadata) (string, error) {
	tenant := uuid.New()
	rec, err := domain.NewRecord(domain.StreamRef{TenantID: tenant, Type: "tenant", ID: tenant}, 3,
		newAPIKeyEvent(), meta, uuid.New(), time.Now())
	if err != nil {
		return "", fmt.Errorf("raw payload: %w", err)
	}
	body, err := json.Marshal(domain.Envelope(rec))
	if err != nil {
		return "", fmt.Errorf("raw payload: %w", err)
	}
	return string(body), nil
}

// rawInsert returns the baseline operation: one autocommitted INSERT.
func rawInsert(pool *pgxpool.Pool, payload string) func(context.Context, int) error {
	return func(ctx context.Context, _ int) error {
		if _, err := pool.Exec(ctx, insertRaw, payload); err != nil {
			return fmt.Errorf("raw insert: %w", err)
		}
		return nil
	}
}
