// Package projections keeps the read models that serve the API's GETs. They
// are written inline, in the transaction that appends the events, so a write
// is visible to the next read; each can be rebuilt from the events
// (package projections/rebuild).
package projections

import (
	"embed"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledger/ledger/domain"
)

//go:embed migrations/*.sql
var Migrations embed.FS

// Projector applies records to every read model. It satisfies
// eventstore.Projector.
type Projector struct{}

// Project queues the statements that apply recs, in order, on b. They run in
// the append's pipeline, after the events' insert and in its transaction,
// and their results are never read: each statement stands on its own.
func (Projector) Project(b *pgx.Batch, recs []domain.Record) error {
	for _, r := range recs {
		e, err := r.Decode()
		if err != nil {
			return fmt.Errorf("project %s %s: %w", r.Type, r.ID, err)
		}
		switch r.StreamType {
		case "tenant":
			projectTenant(b, r, e)
		case "user":
			projectUser(b, r, e)
		case "merchant":
			projectMerchant(b, r, e)
		case "payment":
			projectPayment(b, r, e)
		case "dashboard_user":
			projectDashboardUser(b, r, e)
		}
		if ps := domain.PostingsOf(e); len(ps) > 0 {
			projectPostings(b, r, ps)
		}
	}
	return nil
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
