package ethereum

import (
	"context"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/workers/rails/statement"
)

// Statement is the chain's own record of the token's Transfer logs to the
// deposit addresses, as a statement.Source. It reads the chain, never the
// watcher's books, so a transfer the watcher missed, or one to an address
// it stopped watching, is listed too.
type Statement struct {
	pool          *pgxpool.Pool
	rpc           *RPC
	contract      string
	confirmations uint64
}

// NewStatement returns the statement of contract's transfers to the
// addresses handed out in pool, read from rpc. A transfer with fewer than
// confirmations blocks is pending.
func NewStatement(pool *pgxpool.Pool, rpc *RPC, contract string, confirmations uint64) *Statement {
	return &Statement{pool: pool, rpc: rpc, contract: strings.ToLower(contract), confirmations: max(confirmations, 1)}
}

var _ statement.Source = (*Statement)(nil)

// Records lists the Transfer logs to every address handed out before to,
// in the blocks whose timestamps fall in [from, to): Ref "txhash:logindex",
// the amount in USDT cut to whole cents as the watcher books it (a
// transfer under a cent is not booked, and not listed), at the block's
// time; success once confirmed, pending before. A failed call or a block
// reorganised while it is read fails the statement.
func (s *Statement) Records(ctx context.Context, from, to time.Time) ([]statement.Record, error) {
	head, err := s.rpc.BlockNumber(ctx)
	if err != nil {
		return nil, fmt.Errorf("usdt statement: %w", err)
	}
	first, err := s.firstBlockAt(ctx, from, head)
	if err != nil {
		return nil, err
	}
	end, err := s.firstBlockAt(ctx, to, head)
	if err != nil || first >= end {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT address FROM usdt_addresses WHERE created_at < $1 ORDER BY address`, to)
	if err != nil {
		return nil, fmt.Errorf("usdt statement: deposit addresses: %w", err)
	}
	addresses, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(addresses) == 0 {
		return nil, err
	}
	var out []statement.Record
	for lo := first; lo < end; lo += blockRange {
		hi := min(lo+blockRange, end) - 1
		logs, headers, err := transferLogs(ctx, s.rpc, s.contract, addresses, lo, hi)
		if err != nil {
			return nil, fmt.Errorf("usdt statement: blocks %d-%d: %w", lo, hi, err)
		}
		for _, l := range logs {
			_, _, value, err := l.transfer()
			if err != nil {
				continue // not a Transfer: the watcher credits nothing for it either
			}
			amount := booked(value)
			if !amount.IsPositive() {
				continue
			}
			status := statement.Success
			if uint64(l.BlockNumber)+s.confirmations > head+1 {
				status = statement.Pending
			}
			out = append(out, statement.Record{Rail: "USDT", Ref: strings.ToLower(l.TxHash) + ":" + strconv.FormatUint(uint64(l.LogIndex), 10),
				Direction: statement.In, Amount: amount, Currency: "USDT", Status: status,
				At: time.Unix(int64(headers[uint64(l.BlockNumber)].Timestamp), 0).UTC()})
		}
	}
	return out, nil
}

// booked is a transfer's value as the ledger books it: USDT (the token's
// 6 decimals) cut to whole cents; the rest stays with the address.
func booked(value *big.Int) decimal.Decimal {
	return decimal.NewFromBigInt(value, -tokenDecimals).Truncate(2)
}

// firstBlockAt is the first block at or after t (head+1 when none is): block
// timestamps never decrease along the chain, so a binary search finds it.
func (s *Statement) firstBlockAt(ctx context.Context, t time.Time, head uint64) (uint64, error) {
	lo, hi := uint64(0), head+1
	for lo < hi {
		mid := lo + (hi-lo)/2
		h, err := s.rpc.HeaderByNumber(ctx, mid)
		if err != nil {
			return 0, fmt.Errorf("usdt statement: block %d: %w", mid, err)
		}
		if time.Unix(int64(h.Timestamp), 0).Before(t) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo, nil
}
