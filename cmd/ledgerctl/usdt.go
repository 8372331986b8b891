package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/eventstore"
	"github.com/ledger/ledger/workers/rails/ethereum"
)

// usdtAddress is one deposit address's line of usdt addresses: what the
// custody system that sweeps needs to find its key and check its funds.
type usdtAddress struct {
	Address   string          `json:"address"` // EIP-55
	Index     int64           `json:"index"`   // m/44'/60'/0'/0/index under LEDGER_USDT_XPUB
	PaymentID uuid.UUID       `json:"paymentId"`
	TenantID  uuid.UUID       `json:"tenantId"`
	Credited  decimal.Decimal `json:"credited"`  // USDT credited to the payment, in the token's 6 decimals
	Unmatched decimal.Decimal `json:"unmatched"` // USDT no payment took: an operator returns or applies it
	Transfers int             `json:"transfers"`
}

// usdtTransfer is one line of usdt transfers.
type usdtTransfer struct {
	TxHash    string          `json:"txHash"`
	LogIndex  int64           `json:"logIndex"`
	Block     int64           `json:"block"`
	BlockTime time.Time       `json:"blockTime"`
	Address   string          `json:"address"`
	PaymentID uuid.UUID       `json:"paymentId"`
	TenantID  uuid.UUID       `json:"tenantId"`
	Amount    decimal.Decimal `json:"amount"`
	Status    string          `json:"status"` // credited or unmatched
	Reason    string          `json:"reason,omitempty"`
}

// openUSDT opens the database with the USDT rail's schema, which only
// ledgerd applies otherwise.
func openUSDT(ctx context.Context, db *database) error {
	if err := db.open(ctx); err != nil {
		return err
	}
	return eventstore.Migrate(ctx, db.pool, eventstore.MigrationSet{Component: "usdt", FS: ethereum.Migrations})
}

// usdtAddresses writes, as JSON lines, each deposit address that received
// confirmed transfers, with its derivation index and totals.
func usdtAddresses(ctx context.Context, db *database, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("usdt addresses", flag.ContinueOnError)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("usdt addresses takes no arguments, got %q", fs.Args())
	}
	if err := openUSDT(ctx, db); err != nil {
		return err
	}
	rows, err := db.pool.Query(ctx, `SELECT a.address, a.idx, a.payment_id, a.tenant_id,
		coalesce(sum(t.amount) FILTER (WHERE t.status = 'credited'), 0), coalesce(sum(t.amount) FILTER (WHERE t.status = 'unmatched'), 0),
		count(*) FROM usdt_addresses a JOIN usdt_transfers t ON t.address = a.address GROUP BY a.payment_id ORDER BY a.idx`)
	if err != nil {
		return err
	}
	defer rows.Close()
	enc := json.NewEncoder(stdout)
	for rows.Next() {
		var a usdtAddress
		if err := rows.Scan(&a.Address, &a.Index, &a.PaymentID, &a.TenantID, &a.Credited, &a.Unmatched, &a.Transfers); err != nil {
			return err
		}
		a.Address = checksummed(a.Address)
		if err := enc.Encode(a); err != nil {
			return err
		}
	}
	return rows.Err()
}

// usdtTransfers writes, as JSON lines in chain order, the confirmed
// transfers to deposit addresses, or those with one status.
func usdtTransfers(ctx context.Context, db *database, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("usdt transfers", flag.ContinueOnError)
	status := fs.String("status", "", "only transfers with this status: credited or unmatched")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 || (*status != "" && *status != "credited" && *status != "unmatched") {
		return fmt.Errorf("usdt transfers takes only --status credited or --status unmatched")
	}
	if err := openUSDT(ctx, db); err != nil {
		return err
	}
	rows, err := db.pool.Query(ctx, `SELECT tx_hash, log_index, block_number, block_time, address, payment_id, tenant_id, amount, status, reason
		FROM usdt_transfers WHERE status <> 'seen' AND ($1 = '' OR status = $1) ORDER BY block_number, log_index`, *status)
	if err != nil {
		return err
	}
	defer rows.Close()
	enc := json.NewEncoder(stdout)
	for rows.Next() {
		var t usdtTransfer
		if err := rows.Scan(&t.TxHash, &t.LogIndex, &t.Block, &t.BlockTime, &t.Address, &t.PaymentID, &t.TenantID, &t.Amount,
			&t.Status, &t.Reason); err != nil {
			return err
		}
		t.Address, t.BlockTime = checksummed(t.Address), t.BlockTime.UTC()
		if err := enc.Encode(t); err != nil {
			return err
		}
	}
	return rows.Err()
}

// checksummed writes a stored (lowercase) address in its EIP-55 form.
func checksummed(addr string) string {
	var b [20]byte
	if _, err := hex.Decode(b[:], []byte(strings.TrimPrefix(addr, "0x"))); err != nil {
		return addr
	}
	return ethereum.ChecksumAddress(b)
}
