package ethereum

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/shopspring/decimal"
)

// Migrations is the USDT rail's schema (numbered SQL files under
// migrations/), applied by ledgerd as the "usdt" component.
//
//go:embed migrations/*.sql
var Migrations embed.FS

// Credits counts a confirmed transfer on its payment.
type Credits interface {
	// USDTDeposited records amount (USDT, whole cents) on the payment as
	// the chain transfer ref from sender to the deposit address, dated at.
	// It answers why the payment cannot take it ("" when it is counted,
	// now or by an earlier call); such funds are held as unmatched funds,
	// once per ref.
	USDTDeposited(ctx context.Context, tenantID, paymentID uuid.UUID, amount decimal.Decimal, ref, sender, address string,
		at time.Time) (unmatched string, err error)
}

// Token decimals: USDT's smallest unit is a millionth.
const tokenDecimals = 6

const (
	// blockRange is how many blocks one eth_getLogs call spans: public
	// providers refuse much wider ranges.
	blockRange = 500
	// topicsPerCall is how many deposit addresses one eth_getLogs call
	// filters on.
	topicsPerCall = 500
	// watchWindow is how long after it is handed out an address is
	// watched: long past any payment's validity, so a late transfer to
	// an expired payment is still seen and reported.
	watchWindow = 30 * 24 * time.Hour
)

// Watcher credits ERC-20 Transfer logs of the token to deposit addresses
// once they have Confirmations blocks (the block itself is the first).
//
// Only confirmed blocks are read, so a log whose block is reorganised away
// before then is never seen, and the headers of the blocks read are
// checked against the logs' block hashes, so a reorganisation during the
// read makes the poll read again. A reorganisation deeper than
// Confirmations is not handled: choose Confirmations deeper than any the
// chain has had.
//
// Exactly once: a cursor in Postgres (usdt_cursor) says which block is
// read next; a poll holds its row, so one process reads a range at a
// time, and a process that stops mid-range leaves the cursor where it was.
// Reading a range again is harmless: each log is recorded once per (tx
// hash, log index) in usdt_transfers, and the payment's stream counts
// each transfer once (domain.RecordDeposit.Ref).
type Watcher struct {
	pool          *pgxpool.Pool
	rpc           *RPC
	contract      string // lowercase 0x + 40 hex
	confirmations uint64
	credits       Credits
	log           *slog.Logger
	transfers     *prometheus.CounterVec
}

// NewWatcher returns a watcher of contract's Transfer logs, registering its
// metrics with reg. confirmations is at least 1.
func NewWatcher(pool *pgxpool.Pool, rpc *RPC, contract string, confirmations uint64, credits Credits,
	log *slog.Logger, reg prometheus.Registerer) *Watcher {
	transfers := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ledger_usdt_transfers_total",
		Help: "Confirmed USDT transfers to deposit addresses, by result (credited; unmatched: an operator returns or applies it; unreadable: not an ERC-20 Transfer log)."},
		[]string{"result"})
	reg.MustRegister(transfers)
	return &Watcher{pool: pool, rpc: rpc, contract: strings.ToLower(contract), confirmations: max(confirmations, 1),
		credits: credits, log: log, transfers: transfers}
}

// Poll reads the confirmed blocks past the cursor, range by range, until
// it reaches the confirmed head or another process holds the cursor.
func (w *Watcher) Poll(ctx context.Context) error {
	for {
		done, err := w.step(ctx)
		if err != nil || done {
			return err
		}
	}
}

// step reads the next range of confirmed blocks; done says there is no
// more to read now.
func (w *Watcher) step(ctx context.Context) (done bool, err error) {
	head, err := w.rpc.BlockNumber(ctx)
	if err != nil {
		return true, fmt.Errorf("usdt watcher: %w", err)
	}
	// The first poll ever starts at the newest confirmed block: the chain
	// before it holds no transfers to addresses handed out since.
	start := uint64(0)
	if head+1 >= w.confirmations {
		start = head + 1 - w.confirmations
	}
	if _, err := w.pool.Exec(ctx, `INSERT INTO usdt_cursor (contract, next_block) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
		w.contract, int64(start)); err != nil {
		return true, fmt.Errorf("usdt watcher: cursor: %w", err)
	}
	if head+1 < w.confirmations {
		return true, nil
	}
	confirmed := head + 1 - w.confirmations
	tx, err := w.pool.Begin(ctx)
	if err != nil {
		return true, fmt.Errorf("usdt watcher: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	var next int64
	err = tx.QueryRow(ctx, `SELECT next_block FROM usdt_cursor WHERE contract = $1 FOR UPDATE SKIP LOCKED`, w.contract).Scan(&next)
	if errors.Is(err, pgx.ErrNoRows) {
		return true, nil // another process is reading
	}
	if err != nil {
		return true, fmt.Errorf("usdt watcher: cursor: %w", err)
	}
	from := uint64(next)
	if from > confirmed {
		return true, nil
	}
	to := min(from+blockRange-1, confirmed)
	if err := w.read(ctx, from, to); err != nil {
		return true, fmt.Errorf("usdt watcher: blocks %d-%d: %w", from, to, err)
	}
	if _, err := tx.Exec(ctx, `UPDATE usdt_cursor SET next_block = $2, updated_at = now() WHERE contract = $1`,
		w.contract, int64(to+1)); err != nil {
		return true, fmt.Errorf("usdt watcher: cursor: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return true, fmt.Errorf("usdt watcher: cursor: %w", err)
	}
	return to == confirmed, nil
}

// read credits the Transfer logs to watched addresses in blocks from-to.
func (w *Watcher) read(ctx context.Context, from, to uint64) error {
	rows, err := w.pool.Query(ctx, `SELECT address FROM usdt_addresses WHERE created_at > now() - $1::interval ORDER BY address`,
		strconv.FormatInt(int64(watchWindow/time.Second), 10)+" seconds")
	if err != nil {
		return err
	}
	addresses, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	logs, headers, err := transferLogs(ctx, w.rpc, w.contract, addresses, from, to)
	if err != nil {
		return err
	}
	for _, l := range logs {
		if err := w.credit(ctx, l, headers[uint64(l.BlockNumber)]); err != nil {
			return err
		}
	}
	return nil
}

// credit records one confirmed log and counts it on its payment, once.
func (w *Watcher) credit(ctx context.Context, l Log, h Header) error {
	from, to, value, err := l.transfer()
	if err != nil {
		// Not from a standard ERC-20 contract: nothing to credit, and
		// reading it again would not change it.
		w.transfers.WithLabelValues("unreadable").Inc()
		w.log.Error("usdt: a log of the token that is not a Transfer; check LEDGER_USDT_CONTRACT", "alert", "usdt_unreadable",
			"tx", l.TxHash, "log_index", uint64(l.LogIndex), "err", err)
		return nil
	}
	var paymentID, tenantID uuid.UUID
	err = w.pool.QueryRow(ctx, `SELECT payment_id, tenant_id FROM usdt_addresses WHERE address = $1`, to).Scan(&paymentID, &tenantID)
	if err != nil {
		return fmt.Errorf("log %s:%d: the address %s: %w", l.TxHash, l.LogIndex, to, err)
	}
	txHash, index := strings.ToLower(l.TxHash), int64(l.LogIndex)
	amount := decimal.NewFromBigInt(value, -tokenDecimals)
	at := time.Unix(int64(h.Timestamp), 0).UTC()
	var status string
	err = w.pool.QueryRow(ctx, `INSERT INTO usdt_transfers (tx_hash, log_index, block_number, block_time, address, payment_id, tenant_id, amount)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (tx_hash, log_index) DO UPDATE SET tx_hash = EXCLUDED.tx_hash
		RETURNING status`, txHash, index, int64(h.Number), at, to, paymentID, tenantID, amount).Scan(&status)
	if err != nil {
		return fmt.Errorf("log %s:%d: record: %w", txHash, index, err)
	}
	if status != "seen" {
		return nil // counted, or reported, by an earlier read
	}
	// The API's USDT amounts are in cents: a fraction of a cent stays
	// with the deposit address, for the custody system that sweeps it.
	cents := booked(value)
	unmatched := "less than one cent"
	if cents.IsPositive() {
		unmatched, err = w.credits.USDTDeposited(ctx, tenantID, paymentID, cents, txHash+":"+strconv.FormatInt(index, 10), from, to, at)
		if err != nil {
			return fmt.Errorf("log %s:%d: payment %s: %w", txHash, index, paymentID, err)
		}
	}
	result := "credited"
	if unmatched != "" {
		result = "unmatched"
	}
	tag, err := w.pool.Exec(ctx, `UPDATE usdt_transfers SET status = $3, reason = $4 WHERE tx_hash = $1 AND log_index = $2 AND status = 'seen'`,
		txHash, index, result, unmatched)
	if err != nil || tag.RowsAffected() == 0 {
		return err
	}
	w.transfers.WithLabelValues(result).Inc()
	if unmatched != "" {
		w.log.Error("usdt: a transfer no payment takes; held as unmatched funds for an operator to return or apply", "alert", "usdt_unmatched",
			"tx", txHash, "log_index", index, "address", to, "amount", amount, "payment", paymentID, "reason", unmatched)
		return nil
	}
	w.log.Info("usdt: deposit credited", "payment", paymentID, "tx", txHash, "log_index", index, "amount", cents)
	return nil
}

// Pending says a Transfer log to the payment's address, in a block made
// before before, lies past the cursor: not read yet, most likely because
// its block is not yet confirmed. A log that is reorganised away stops
// being found.
func (w *Watcher) Pending(ctx context.Context, paymentID uuid.UUID, before time.Time) (bool, error) {
	var addr string
	err := w.pool.QueryRow(ctx, `SELECT address FROM usdt_addresses WHERE payment_id = $1`, paymentID).Scan(&addr)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	var next int64
	err = w.pool.QueryRow(ctx, `SELECT next_block FROM usdt_cursor WHERE contract = $1`, w.contract).Scan(&next)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil // nothing read yet: the first poll starts past any transfer to it
	}
	if err != nil {
		return false, err
	}
	head, err := w.rpc.BlockNumber(ctx)
	if err != nil || uint64(next) > head {
		return false, err
	}
	// From the cursor to the head is at most a range or two: the
	// confirmations, and what the watcher has not caught up on.
	logs, err := w.rpc.Logs(ctx, LogFilter{FromBlock: uint64(next), ToBlock: head, Address: w.contract,
		Topics: [][]string{{TransferTopic}, nil, {addressTopic(addr)}}})
	if err != nil {
		return false, err
	}
	for _, l := range logs {
		h, err := w.rpc.HeaderByNumber(ctx, uint64(l.BlockNumber))
		if err != nil {
			return false, err
		}
		if !l.Removed && h.Hash == strings.ToLower(l.BlockHash) && time.Unix(int64(h.Timestamp), 0).Before(before) {
			return true, nil
		}
	}
	return false, nil
}

// Ready says whether the node answers (GET /readyz).
func (w *Watcher) Ready(ctx context.Context) error {
	if _, err := w.rpc.BlockNumber(ctx); err != nil {
		w.log.Warn("readiness: ethereum", "err", err)
		return errors.New("the ethereum node is unreachable")
	}
	return nil
}
