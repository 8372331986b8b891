package payout

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledger/ledger/workers/rails/lightning"
)

// LightningPayoutKeys reads which payout paid a payment hash from the
// Lightning rail's books (lightning_payouts), for the node's statement.
type LightningPayoutKeys struct {
	pool *pgxpool.Pool
}

// NewLightningPayoutKeys returns the payout keys of the books in pool.
func NewLightningPayoutKeys(pool *pgxpool.Pool) LightningPayoutKeys {
	return LightningPayoutKeys{pool: pool}
}

var _ lightning.PayoutKeys = LightningPayoutKeys{}

// PayoutKeys maps each of hashes a payout paid (or tried to) to the
// payout's idempotency key.
func (k LightningPayoutKeys) PayoutKeys(ctx context.Context, hashes []string) (map[string]string, error) {
	rows, err := k.pool.Query(ctx, `SELECT payment_hash, idempotency_key FROM lightning_payouts WHERE payment_hash = ANY($1)`, hashes)
	if err != nil {
		return nil, fmt.Errorf("lightning payouts by hash: %w", err)
	}
	keys := map[string]string{}
	var hash, key string
	if _, err := pgx.ForEachRow(rows, []any{&hash, &key}, func() error { keys[hash] = key; return nil }); err != nil {
		return nil, fmt.Errorf("lightning payouts by hash: %w", err)
	}
	return keys, nil
}
