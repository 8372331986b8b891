// Package projections keeps the read models that serve the API's GETs. They
// are written inline, in the transaction that appends the events, so a write
// is visible to the next read; each can be rebuilt from the events
// (package projections/rebuild).
package projections

import (
	"embed"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledger/ledger/domain"
)

//go:embed migrations/*.sql
var Migrations embed.FS

// Projector writes the read models of appended records in the append's
// transaction. It satisfies eventstore.Projector.
type Projector struct{}

// Project queues the statements that apply recs, one stream's new records
// in order, to the read models, given the stream's state before them (nil
// for a new stream), on b. They run in the append's pipeline, after the
// events' insert and in its transaction, and their results are never read:
// each statement stands on its own.
func (Projector) Project(b *pgx.Batch, before any, recs []domain.Record) error {
	_, err := ProjectStream(sqlRows{b}, before, recs)
	return err
}

// Reader answers the read models' queries.
type Reader struct {
	pool      *pgxpool.Pool
	owners    *factCache[uuid.UUID]               // tenant id -> owner user id
	merchants *factCache[domain.MerchantSnapshot] // merchant id -> merchant
}

// NewReader returns a Reader over pool.
func NewReader(pool *pgxpool.Pool) *Reader {
	return &Reader{pool: pool, owners: newFactCache[uuid.UUID](100_000),
		merchants: newFactCache[domain.MerchantSnapshot](100_000)}
}
