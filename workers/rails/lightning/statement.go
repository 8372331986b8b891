package lightning

import (
	"context"
	"encoding/hex"
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
	offset := "0"
	for {
		q := url.Values{"index_offset": {offset}, "num_max_invoices": {strconv.Itoa(s.page)},
			"creation_date_start": {unixSeconds(from.Add(-invoiceLookback))}, "creation_date_end": {unixSeconds(to)}}
		var page struct {
			Invoices        []listedInvoice `json:"invoices"`
			LastIndexOffset string          `json:"last_index_offset"`
		}
		if err := s.node.call(ctx, op, http.MethodGet, "/v1/invoices?"+q.Encode(), nil, &page); err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		for _, inv := range page.Invoices {
			if inv.State != "SETTLED" {
				continue
			}
			paid, err1 := strconv.ParseInt(inv.AmtPaidSat, 10, 64)
			settled, err2 := strconv.ParseInt(inv.SettleDate, 10, 64)
			if err1 != nil || err2 != nil || paid <= 0 || len(inv.RHash) != 32 {
				return nil, fmt.Errorf("%s: a settled invoice %x of %q sats at %q", op, inv.RHash, inv.AmtPaidSat, inv.SettleDate)
			}
			at := time.Unix(settled, 0).UTC()
			if at.Before(from) || !at.Before(to) {
				continue
			}
			out = append(out, statement.Record{Rail: "LIGHTNING", Ref: hex.EncodeToString(inv.RHash), Direction: statement.In,
				Amount: decimal.NewFromInt(paid), Currency: "sats", Status: statement.Success, At: at})
		}
		next, done, err := advance(op, offset, page.LastIndexOffset, len(page.Invoices), s.page)
		if err != nil || done {
			return out, err
		}
		offset = next
	}
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
	offset := "0"
	for {
		q := url.Values{"include_incomplete": {"true"}, "index_offset": {offset}, "max_payments": {strconv.Itoa(s.page)},
			"creation_date_start": {unixSeconds(from)}, "creation_date_end": {unixSeconds(to)}, "omit_hops": {"true"}}
		var page struct {
			Payments        []listedPayment `json:"payments"`
			LastIndexOffset string          `json:"last_index_offset"`
		}
		if err := s.node.call(ctx, op, http.MethodGet, "/v1/payments?"+q.Encode(), nil, &page); err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		for _, p := range page.Payments {
			sats, err1 := strconv.ParseInt(p.ValueSat, 10, 64)
			ns, err2 := strconv.ParseInt(p.CreationTimeNS, 10, 64)
			if _, err := hex.DecodeString(p.PaymentHash); err != nil || err1 != nil || err2 != nil || len(p.PaymentHash) != 64 {
				return nil, fmt.Errorf("%s: a payment %q of %q sats at %q ns", op, p.PaymentHash, p.ValueSat, p.CreationTimeNS)
			}
			at := time.Unix(0, ns).UTC()
			if at.Before(from) || !at.Before(to) {
				continue
			}
			out = append(out, statement.Record{Rail: "LIGHTNING", Ref: p.PaymentHash, Direction: statement.Out,
				Amount: decimal.NewFromInt(sats), Currency: "sats", Status: paymentStatus(p.Status), At: at})
			hashes = append(hashes, p.PaymentHash)
		}
		next, done, err := advance(op, offset, page.LastIndexOffset, len(page.Payments), s.page)
		if err != nil {
			return nil, err
		}
		if done {
			break
		}
		offset = next
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

// advance is the index_offset of the next page after one of n items
// (of at most size) ending at last, or done when it was the last page.
// An offset that does not move on would list the same page forever.
func advance(op, offset, last string, n, size int) (next string, done bool, err error) {
	if n < size {
		return "", true, nil
	}
	prev, err1 := strconv.ParseUint(offset, 10, 64)
	at, err2 := strconv.ParseUint(last, 10, 64)
	if err1 != nil || err2 != nil || at <= prev {
		return "", false, fmt.Errorf("%s: a full page ending at index %q after %q", op, last, offset)
	}
	return last, false, nil
}

// unixSeconds is t in whole seconds, rounded down, as lnd's creation
// date filters take it (both ends inclusive).
func unixSeconds(t time.Time) string { return strconv.FormatInt(t.Unix(), 10) }
