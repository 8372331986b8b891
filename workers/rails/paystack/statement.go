package paystack

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/workers/rails/statement"
)

// statementPerPage is the page size the statement asks for: Paystack's
// default is 50; fewer, larger pages cost fewer requests a day.
const statementPerPage = 100

// maxStatementPages bounds one window's listing, so an answer that never
// reports its last page cannot keep a reconciliation run going forever.
const maxStatementPages = 10_000

// Statement is Paystack's own record of the integration's transfers, as a
// statement.Source: every transfer created in a window, the payouts this
// rail made and any made by hand on Paystack's dashboard alike.
type Statement struct {
	client  *Client
	perPage int
}

// NewStatement returns the statement of the integration client's key opens.
func NewStatement(client *Client) *Statement {
	return &Statement{client: client, perPage: statementPerPage}
}

var _ statement.Source = (*Statement)(nil)

// Records lists the transfers created in [from, to), each with its status
// now. The list's from and to are asked for, and the window is applied
// again to createdAt here, because Paystack does not say whether its ends
// are inclusive. A transfer the list shows pending is verified by its
// reference (GET /transfer/verify), which answers its latest status. Any
// failed request fails the whole statement: a page missing would read as
// transfers that never happened.
func (s *Statement) Records(ctx context.Context, from, to time.Time) ([]statement.Record, error) {
	var out []statement.Record
	seen := map[string]bool{}
	for page := 1; ; page++ {
		list, meta, err := s.client.ListTransfers(ctx, from, to, page, s.perPage)
		if err != nil {
			return nil, fmt.Errorf("paystack statement: page %d: %w", page, err)
		}
		for _, t := range list {
			// The list is newest first by offset: a transfer created while
			// it is read shifts the pages, and one may come twice.
			if t.CreatedAt.Before(from) || !t.CreatedAt.Before(to) || seen[t.Reference] {
				continue
			}
			seen[t.Reference] = true
			if statusOf(t.Status) == statement.Pending {
				v, err := s.client.Verify(ctx, t.Reference)
				if err != nil {
					return nil, fmt.Errorf("paystack statement: verify %s: %w", t.Reference, err)
				}
				t.Transfer = v
			}
			r, err := toRecord(t)
			if err != nil {
				return nil, fmt.Errorf("paystack statement: %w", err)
			}
			out = append(out, r)
		}
		if len(list) == 0 || page >= meta.PageCount {
			return out, nil
		}
		if page == maxStatementPages {
			return nil, fmt.Errorf("paystack statement: more than %d pages of %d", maxStatementPages, s.perPage)
		}
	}
}

// toRecord is t in the ledger's terms: a payout from the balance (Out) of
// its reference, in its currency's main unit (Paystack counts subunits:
// kobo, cents).
func toRecord(t ListedTransfer) (statement.Record, error) {
	if t.Reference == "" || t.Currency == "" || t.Amount <= 0 {
		return statement.Record{}, errors.New("a transfer without reference, currency or amount: " + t.TransferCode)
	}
	return statement.Record{Rail: "BANK", Ref: t.Reference, Direction: statement.Out,
		Amount: decimal.New(t.Amount, -2), Currency: t.Currency, Status: statusOf(t.Status), At: t.CreatedAt.UTC()}, nil
}

// statusOf maps a transfer's status (https://paystack.com/docs/transfers/how-transfers-work/)
// to a statement status. The money left for success only; reversed came
// back after it left; failed, abandoned, blocked and rejected never left;
// anything else (pending, otp, received, queued) is not over.
func statusOf(s string) string {
	switch s {
	case "success":
		return statement.Success
	case "reversed":
		return statement.Reversed
	case "failed", "abandoned", "blocked", "rejected":
		return statement.Failed
	}
	return statement.Pending
}
