package lightning

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/workers/rails/statement"
)

const (
	// statementPage is how many invoices or payments one call lists: a
	// page fits lndMaxBody with room to spare.
	statementPage = 50
	// invoiceLookback is how long before a window an invoice may have
	// been made and still be settled in it: far past any deposit
	// invoice's validity.
	invoiceLookback = 30 * 24 * time.Hour
)

// PayoutKeys names the payouts of the rail by the payment hash LND paid
// (payout.LightningPayoutKeys reads them from the payout rail's books).
type PayoutKeys interface {
	// PayoutKeys maps each of hashes (lowercase hex) that a payout paid
	// to that payout's idempotency key.
	PayoutKeys(ctx context.Context, hashes []string) (map[string]string, error)
}

// Statement is the node's own history as a statement.Source: the
// invoices it settled (deposits, In) and the payments it sent (payouts,
// Out). The node's channel and wallet balances are not a statement's:
// they move with fees, channel opens and closes, and are left out.
type Statement struct {
	node    *LND
	payouts PayoutKeys
	page    int
}

// NewStatement returns the statement of node, naming its payments by the
// payouts' idempotency keys where payouts knows them.
func NewStatement(node *LND, payouts PayoutKeys) *Statement {
	return &Statement{node: node, payouts: payouts, page: statementPage}
}

var _ statement.Source = (*Statement)(nil)

// Records lists the invoices settled in [from, to) (ListInvoices: their
// payment hash, the amount paid in whole sats, the settle date) and the
// payments created in [from, to) (ListPayments, incomplete ones
// included: their payout's idempotency key, else their payment hash, the
// amount without fees, the creation time and the status). A page the
// node does not answer fails the statement.
func (s *Statement) Records(ctx context.Context, from, to time.Time) ([]statement.Record, error) {
	in, err := s.settled(ctx, from, to)
	if err != nil {
		return nil, err
	}
	out, err := s.sent(ctx, from, to)
	if err != nil {
		return nil, err
	}
	return append(in, out...), nil
}

// listedInvoice is what we read of an lnrpc.Invoice in a list.
type listedInvoice struct {
	RHash      []byte `json:"r_hash"`
	State      string `json:"state"`
	AmtPaidSat string `json:"amt_paid_sat"`
	SettleDate string `json:"settle_date"`
}

// settled pages through the invoices made since invoiceLookback before
// from, up to to, and keeps those settled in [from, to): ListInvoices
// filters by creation date only.
func (s *Statement) settled(ctx context.Context, from, to time.Time) ([]statement.Record, error) {
	const op = "lnd statement: list invoices"
	var out []statement.Record
	q := url.Values{"num_max_invoices": {strconv.Itoa(s.page)}, "creation_date_start": {unixSeconds(from.Add(-invoiceLookback))},
		"creation_date_end": {unixSeconds(to)}}
	err := listPages(ctx, s.node, op, "/v1/invoices", "invoices", q, s.page, func(inv listedInvoice) error {
		if inv.State != "SETTLED" {
			return nil
		}
		paid, err1 := strconv.ParseInt(inv.AmtPaidSat, 10, 64)
		settled, err2 := strconv.ParseInt(inv.SettleDate, 10, 64)
		if err1 != nil || err2 != nil || paid <= 0 || len(inv.RHash) != 32 {
			return fmt.Errorf("%s: a settled invoice %x of %q sats at %q", op, inv.RHash, inv.AmtPaidSat, inv.SettleDate)
		}
		if at := time.Unix(settled, 0).UTC(); !at.Before(from) && at.Before(to) {
			out = append(out, statement.Record{Rail: "LIGHTNING", Ref: hex.EncodeToString(inv.RHash), Direction: statement.In,
				Amount: decimal.NewFromInt(paid), Currency: "sats", Status: statement.Success, At: at})
		}
		return nil
	})
	return out, err
}

// listedPayment is what we read of an lnrpc.Payment in a list.
type listedPayment struct {
	PaymentHash    string `json:"payment_hash"`
	ValueSat       string `json:"value_sat"`
	Status         string `json:"status"`
	CreationTimeNS string `json:"creation_time_ns"`
}

// sent pages through the payments created in [from, to), complete or not.
func (s *Statement) sent(ctx context.Context, from, to time.Time) ([]statement.Record, error) {
	const op = "lnd statement: list payments"
	var out []statement.Record
	var hashes []string
	q := url.Values{"include_incomplete": {"true"}, "max_payments": {strconv.Itoa(s.page)}, "creation_date_start": {unixSeconds(from)},
		"creation_date_end": {unixSeconds(to)}, "omit_hops": {"true"}}
	err := listPages(ctx, s.node, op, "/v1/payments", "payments", q, s.page, func(p listedPayment) error {
		sats, err1 := strconv.ParseInt(p.ValueSat, 10, 64)
		ns, err2 := strconv.ParseInt(p.CreationTimeNS, 10, 64)
		if _, err := hex.DecodeString(p.PaymentHash); err != nil || err1 != nil || err2 != nil || len(p.PaymentHash) != 64 {
			return fmt.Errorf("%s: a payment %q of %q sats at %q ns", op, p.PaymentHash, p.ValueSat, p.CreationTimeNS)
		}
		if at := time.Unix(0, ns).UTC(); !at.Before(from) && at.Before(to) {
			out = append(out, statement.Record{Rail: "LIGHTNING", Ref: p.PaymentHash, Direction: statement.Out,
				Amount: decimal.NewFromInt(sats), Currency: "sats", Status: paymentStatus(p.Status), At: at})
			hashes = append(hashes, p.PaymentHash)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(hashes) == 0 {
		return out, nil
	}
	keys, err := s.payouts.PayoutKeys(ctx, hashes)
	if err != nil {
		return nil, fmt.Errorf("lnd statement: payouts by payment hash: %w", err)
	}
	for i, r := range out {
		if key, ok := keys[r.Ref]; ok {
			out[i].Ref = key
		}
	}
	return out, nil
}

// paymentStatus maps lnrpc.Payment.PaymentStatus to a statement status:
// IN_FLIGHT and INITIATED are not over.
func paymentStatus(s string) string {
	switch s {
	case "SUCCEEDED":
		return statement.Success
	case "FAILED":
		return statement.Failed
	}
	return statement.Pending
}

// listPages pages forward through one of lnd's list calls (ListInvoices,
// ListPayments) with query q, giving each item of the answer's items
// member to each. A page of fewer than size items is the last; a full
// page whose last_index_offset does not move on would list the same page
// forever, and is an error.
func listPages[T any](ctx context.Context, n *LND, op, path, items string, q url.Values, size int, each func(T) error) error {
	offset := uint64(0)
	for {
		q.Set("index_offset", strconv.FormatUint(offset, 10))
		var page map[string]json.RawMessage
		if err := n.call(ctx, op, http.MethodGet, path+"?"+q.Encode(), nil, &page); err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		var list []T
		if raw, ok := page[items]; ok {
			if err := json.Unmarshal(raw, &list); err != nil {
				return fmt.Errorf("%s: %w", op, err)
			}
		}
		for _, item := range list {
			if err := each(item); err != nil {
				return err
			}
		}
		if len(list) < size {
			return nil
		}
		var last string
		_ = json.Unmarshal(page["last_index_offset"], &last)
		next, err := strconv.ParseUint(last, 10, 64)
		if err != nil || next <= offset {
			return fmt.Errorf("%s: a full page ending at index %q after %d", op, last, offset)
		}
		offset = next
	}
}

// unixSeconds is t in whole seconds, rounded down, as lnd's creation
// date filters take it (both ends inclusive).
func unixSeconds(t time.Time) string { return strconv.FormatInt(t.Unix(), 10) }
