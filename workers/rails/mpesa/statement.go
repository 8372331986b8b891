package mpesa

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledger/ledger/workers/rails/statement"
)

// rail is the ledger's name of M-Pesa, in and out.
const rail = "MOMO"

const (
	// statusWait bounds how long a statement waits for the Transaction
	// Status results it asked for: Daraja answers within seconds.
	statusWait = 30 * time.Second
	// statusLookback is how far before a window a payout may have been
	// asked for and still complete inside it.
	statusLookback = 7 * 24 * time.Hour
)

// Reports is a directory of the statements (*.csv) the M-Pesa org portal
// exports for the paybill and the B2C shortcode, read as a
// statement.Source. Every call reads the directory again.
//
// A payout is known to the ledger by its OriginatorConversationID, and
// to the statement by its receipt; the rail learns the receipt from the
// B2C result. A withdrawal whose receipt the rail has not learned (the
// result never came) is looked up: each payout the rail still has pending
// without a receipt gets a Transaction Status query, whose result the
// rail records as it does for a payout call (statusResult), and the
// statement waits a little for the receipts to arrive.
type Reports struct {
	dir    string
	pool   *pgxpool.Pool
	client *Client
	cfg    Config
	wait   time.Duration
}

// NewReports returns the statements in dir, resolving receipts through
// the rail's books in pool and Daraja's Transaction Status with client
// and cfg (the rail's own).
func NewReports(dir string, pool *pgxpool.Pool, client *Client, cfg Config) *Reports {
	return &Reports{dir: dir, pool: pool, client: client, cfg: cfg, wait: statusWait}
}

var _ statement.Source = (*Reports)(nil)

// Records lists the transactions completed in [from, to): a payment in
// (Paid In) under its receipt, a payout (Withdrawn) under its
// OriginatorConversationID, or its receipt when no payout of the rail
// has it. Charges (a Reason Type naming a charge) are fees, not payments,
// and are left out. A reversal (a Reason Type or Details naming one, with
// a Linked Transaction ID) marks the transaction it takes back reversed,
// or, when that one completed before the window, is listed as it,
// reversed, at the reversal's time.
//
// An empty directory, a file that cannot be read or a Transaction Status
// query Daraja refuses fails the statement.
func (s *Reports) Records(ctx context.Context, from, to time.Time) ([]statement.Record, error) {
	rows, err := s.read(ctx)
	if err != nil {
		return nil, err
	}
	var in []ReportRow
	var receipts []string
	for _, r := range rows {
		if r.At.Before(from) || !r.At.Before(to) || isCharge(r) {
			continue
		}
		in = append(in, r)
		if r.Withdrawn.IsPositive() {
			receipts = append(receipts, r.Receipt)
		}
		if isReversal(r) && r.PaidIn.IsPositive() {
			receipts = append(receipts, r.Linked) // a payout taken back
		}
	}
	slices.Sort(receipts)
	payouts, err := s.payouts(ctx, slices.Compact(receipts), from, to)
	if err != nil {
		return nil, err
	}
	ref := func(receipt string, out bool) string {
		if id, ok := payouts[receipt]; ok && out {
			return id
		}
		return receipt
	}
	var out []statement.Record
	at := map[string]int{} // ref -> index in out
	for _, r := range in {
		if isReversal(r) {
			continue
		}
		rec := statement.Record{Rail: rail, Ref: ref(r.Receipt, r.Withdrawn.IsPositive()), Direction: statement.In, Amount: r.PaidIn,
			Currency: "KES", Status: reportStatus(r.Status), At: r.At}
		if r.Withdrawn.IsPositive() {
			rec.Direction, rec.Amount = statement.Out, r.Withdrawn
		}
		at[rec.Ref] = len(out)
		out = append(out, rec)
	}
	for _, r := range in {
		if !isReversal(r) || reportStatus(r.Status) != statement.Success {
			continue
		}
		// The reversal moves money the other way from the transaction it takes back.
		taken := ref(r.Linked, r.PaidIn.IsPositive())
		if i, ok := at[taken]; ok {
			out[i].Status = statement.Reversed
			continue
		}
		rec := statement.Record{Rail: rail, Ref: taken, Direction: statement.Out, Amount: r.PaidIn, Currency: "KES",
			Status: statement.Reversed, At: r.At}
		if r.Withdrawn.IsPositive() {
			rec.Direction, rec.Amount = statement.In, r.Withdrawn
		}
		at[taken] = len(out)
		out = append(out, rec)
	}
	return out, nil
}

func isCharge(r ReportRow) bool { return strings.Contains(strings.ToLower(r.ReasonType), "charge") }

func isReversal(r ReportRow) bool {
	return r.Linked != "" && (strings.Contains(strings.ToLower(r.ReasonType), "reversal") ||
		strings.HasPrefix(strings.ToLower(r.Details), "reversal"))
}

// reportStatus maps a Transaction Status to a statement status.
func reportStatus(s string) string {
	switch strings.ToLower(s) {
	case "completed":
		return statement.Success
	case "failed", "cancelled", "declined", "expired":
		return statement.Failed
	}
	return statement.Pending
}

// read parses every statement file of the directory, each transaction
// once: statements of overlapping periods repeat lines.
func (s *Reports) read(ctx context.Context) ([]ReportRow, error) {
	names, err := filepath.Glob(filepath.Join(s.dir, "*.csv"))
	if err != nil {
		return nil, fmt.Errorf("m-pesa statements: %w", err)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("m-pesa statements: no *.csv statement in %s", s.dir)
	}
	slices.Sort(names)
	seen := map[[2]string]ReportRow{}
	var out []ReportRow
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rows, err := readReport(name)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			key := [2]string{r.Receipt, r.ReasonType}
			if prev, ok := seen[key]; ok {
				if !prev.At.Equal(r.At) || prev.Status != r.Status || !prev.PaidIn.Equal(r.PaidIn) || !prev.Withdrawn.Equal(r.Withdrawn) {
					return nil, fmt.Errorf("m-pesa statements: %s line %d: receipt %s differs from an earlier statement's", filepath.Base(name), r.Line, r.Receipt)
				}
				continue
			}
			seen[key] = r
			out = append(out, r)
		}
	}
	return out, nil
}

func readReport(name string) ([]ReportRow, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("m-pesa statements: %w", err)
	}
	defer f.Close()
	rows, err := ParseReport(f)
	if err != nil {
		return nil, fmt.Errorf("m-pesa statements: %s: %w", filepath.Base(name), err)
	}
	return rows, nil
}

// payouts maps each receipt of the rail's payouts among receipts to the
// payout's OriginatorConversationID. When some are not found, it asks
// Transaction Status of the payouts pending without a receipt that were
// asked for since statusLookback before from, and waits, at most s.wait,
// until the receipts are found or those payouts have all been answered.
func (s *Reports) payouts(ctx context.Context, receipts []string, from, to time.Time) (map[string]string, error) {
	known, err := s.known(ctx, receipts)
	if err != nil || len(known) == len(receipts) {
		return known, err
	}
	rows, err := s.pool.Query(ctx, `SELECT `+payoutColumns+` FROM mpesa_payouts WHERE posted AND status = 'pending' AND receipt = ''
		AND created_at >= $1 AND created_at < $2 ORDER BY created_at`, from.Add(-statusLookback), to)
	if err != nil {
		return nil, fmt.Errorf("m-pesa statements: payouts without a receipt: %w", err)
	}
	asked, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (payoutRow, error) { return scanPayout(r) })
	if err != nil || len(asked) == 0 {
		return known, err
	}
	ids := make([]string, len(asked))
	for i, row := range asked {
		if err := askStatus(ctx, s.client, s.cfg, row); err != nil {
			return nil, fmt.Errorf("m-pesa statements: %w", err)
		}
		ids[i] = row.originatorID
	}
	deadline := time.Now().Add(s.wait)
	for waiting := len(ids); waiting > 0 && len(known) < len(receipts) && time.Now().Before(deadline); {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if known, err = s.known(ctx, receipts); err != nil {
			return nil, err
		}
		if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM mpesa_payouts WHERE originator_id = ANY($1) AND status = 'pending'
			AND receipt = ''`, ids).Scan(&waiting); err != nil {
			return nil, fmt.Errorf("m-pesa statements: payouts asked about: %w", err)
		}
	}
	return known, nil
}

// known maps the receipts the rail has recorded on its payouts.
func (s *Reports) known(ctx context.Context, receipts []string) (map[string]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT receipt, originator_id FROM mpesa_payouts WHERE receipt = ANY($1)`, receipts)
	if err != nil {
		return nil, fmt.Errorf("m-pesa statements: payouts by receipt: %w", err)
	}
	m := map[string]string{}
	var receipt, id string
	if _, err := pgx.ForEachRow(rows, []any{&receipt, &id}, func() error { m[receipt] = id; return nil }); err != nil {
		return nil, fmt.Errorf("m-pesa statements: payouts by receipt: %w", err)
	}
	return m, nil
}
