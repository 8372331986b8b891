package reconcile

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/workers/rails/statement"
)

// Ledger is the ledger's side of a reconciliation, read from the events
// and the read models their folds write (never from the tables the rail
// adapters keep, which are the providers' side).
type Ledger struct{ pool *pgxpool.Pool }

// NewLedger returns the ledger's side over pool.
func NewLedger(pool *pgxpool.Pool) *Ledger { return &Ledger{pool: pool} }

// Records returns the ledger's records of rail whose events say they
// happened in [from, to), in the shape a provider's statement has. Each
// event comes with the state of its payment (or unmatched item) from the
// read model, which holds the references that do not change: the
// funding and payout rails, the invoice's hash, the bank entry.
func (l *Ledger) Records(ctx context.Context, rail string, from, to time.Time) ([]statement.Record, error) {
	rows, err := l.pool.Query(ctx, ledgerMovementsQuery, from, to)
	if err != nil {
		return nil, fmt.Errorf("read the ledger's movements: %w", err)
	}
	events, err := pgx.CollectRows(rows, scanLedgerEvent)
	if err != nil {
		return nil, fmt.Errorf("read the ledger's movements: %w", err)
	}
	var out []statement.Record
	for _, r := range ledgerRecords(events) {
		if r.Rail == rail {
			out = append(out, r)
		}
	}
	return out, nil
}

// ledgerMovementsQuery reads the money events of [$1, $2), each with the
// state of its payment and unmatched item.
var ledgerMovementsQuery = `SELECT e.type, e.schema_version, e.data, p.state, u.state
		FROM events e
		LEFT JOIN payments p ON e.stream_type = 'payment' AND p.id = e.stream_id
		LEFT JOIN unmatched_funds u ON u.id = CASE WHEN e.stream_type = 'unmatched_funds' THEN e.stream_id
			ELSE (e.data->'source'->>'unmatchedFundsId')::uuid END
		WHERE e.type IN (` + movementTypesSQL + `) AND event_at(e.data) >= $1 AND event_at(e.data) < $2
		ORDER BY event_at(e.data), e.seq`

// movementTypesSQL is ledgerMovementTypes as SQL literals: the types are
// written into the query, where the planner can see that the partial index
// events_movements_at (migration 0003) covers them; a parameter would hide
// that and read the whole history.
var movementTypesSQL = "'" + strings.Join(ledgerMovementTypes, "', '") + "'"

func scanLedgerEvent(row pgx.CollectableRow) (ledgerEvent, error) {
	var (
		typ                      string
		version                  int
		data, payment, unmatched []byte
	)
	if err := row.Scan(&typ, &version, &data, &payment, &unmatched); err != nil {
		return ledgerEvent{}, err
	}
	e, err := domain.DecodeEvent(typ, version, data)
	if err != nil {
		return ledgerEvent{}, err
	}
	le := ledgerEvent{Event: e}
	if payment != nil {
		p, err := domain.DecodePayment(payment)
		if err != nil {
			return le, fmt.Errorf("decode payment: %w", err)
		}
		le.Payment = &p
	}
	if unmatched != nil {
		le.Unmatched = new(domain.UnmatchedFunds)
		if err := json.Unmarshal(unmatched, le.Unmatched); err != nil {
			return le, fmt.Errorf("decode unmatched funds: %w", err)
		}
	}
	return le, nil
}

// Balance is the balance of the ledger's account of money at rail
// (external:<rail>) in currency at at: its debits less its credits, over
// every tenant's postings recorded before at.
func (l *Ledger) Balance(ctx context.Context, rail, currency string, at time.Time) (decimal.Decimal, error) {
	var b decimal.Decimal
	err := l.pool.QueryRow(ctx, `SELECT coalesce(sum(CASE WHEN side = 'debit' THEN amount ELSE -amount END), 0)
		FROM ledger_entries e, unnest(e.accounts, e.currencies, e.sides, e.amounts) AS l(account, currency, side, amount)
		WHERE e.recorded_at < $3 AND l.account = $1 AND l.currency = $2`, domain.ExternalAccount(rail), currency, at).Scan(&b)
	if err != nil {
		return b, fmt.Errorf("ledger balance of %s %s: %w", domain.ExternalAccount(rail), currency, err)
	}
	return b, nil
}
