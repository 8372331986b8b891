package eventstore

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// outerTxKey carries a transaction that a whole request runs in (see
// Idempotency), so that its effect and its recorded response commit together.
type outerTxKey struct{}

func withOuterTx(ctx context.Context, tx pgx.Tx) context.Context {
	return context.WithValue(ctx, outerTxKey{}, tx)
}

func outerTx(ctx context.Context) pgx.Tx {
	tx, _ := ctx.Value(outerTxKey{}).(pgx.Tx)
	return tx
}

type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// querier reads through the request's transaction when there is one, so a
// command sees its own request's earlier writes.
func (s *Store) querier(ctx context.Context) querier {
	if tx := outerTx(ctx); tx != nil {
		return tx
	}
	return s.pool
}
