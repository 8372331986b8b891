package reconcile

import (
	"cmp"
	"slices"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/workers/rails/statement"
)

// ledgerEvent is one money event of the ledger, with the state of the
// streams that name its rail and reference.
type ledgerEvent struct {
	Event domain.Event
	// Payment is the state of a payment event's payment.
	Payment *domain.Payment
	// Unmatched is the unmatched item of an unmatched event, or the item
	// an operator assigned to a payment whose deposit this is.
	Unmatched *domain.UnmatchedFunds
}

// ledgerMovementTypes are the event types ledgerRecords reads.
var ledgerMovementTypes = []string{"payment.deposit_received", "payment.deposited", "payment.transferring",
	"payment.change_refund_sent", "unmatched_funds.received", "unmatched_funds.assigned", "unmatched_funds.return_sent"}

// ledgerRecords turns the ledger's money events into the records a
// provider would list (the references are those of the statement
// package's Record.Ref, docs/reconciliation.md):
//
//   - money in is the net of what each provider transfer brought to the
//     rail's account: a bank credit split between a deposit and its excess
//     is one record, and an operator's assignment of unmatched funds to a
//     payment (which moves them out of suspense, deposits them and holds
//     any excess again) nets to nothing;
//   - a payout is one record per payment, keyed by its idempotency key
//     (the payment id), dated when its intent was recorded (just before
//     the rail was called: payment.transferring), with the amount it pays
//     and its status now: pending while transferring, failed, success,
//     or reversed when a success came back;
//   - money paid back to a payer by a payout rail (a payment's change, unmatched
//     funds returned) is one record per refund, keyed by the refund's own
//     idempotency key (change-<payment id>, return-<unmatched id>), dated
//     when it was asked of the rail, with the rail's outcome now. A refund an
//     operator paid by hand left no rail record: it is not listed.
func ledgerRecords(events []ledgerEvent) []statement.Record {
	type in struct {
		rec statement.Record
		net decimal.Decimal
	}
	ins := map[key]*in{}
	var inOrder []key
	addIn := func(rail, ref, currency string, amount decimal.Decimal, at time.Time) {
		k := key{rail, ref}
		m, ok := ins[k]
		if !ok {
			m = &in{rec: statement.Record{Rail: rail, Ref: ref, Currency: currency, Status: statement.Success, At: at}}
			ins[k] = m
			inOrder = append(inOrder, k)
		}
		m.net = m.net.Add(amount)
	}
	var out []statement.Record
	for _, le := range events {
		switch e := le.Event.(type) {
		case domain.PaymentDepositReceived:
			if rail, ref, ok := depositRef(le, e.Source, e.Ref); ok {
				addIn(rail, ref, le.Payment.DepositCurrency, e.Amount, e.At)
			}
		case domain.PaymentDeposited:
			if rail, ref, ok := depositRef(le, e.Source, e.Ref); ok {
				addIn(rail, ref, le.Payment.DepositCurrency, e.Amount, e.At)
			}
		case domain.UnmatchedFundsReceived:
			addIn(e.Rail, e.Entry.EntryRef, e.Currency, e.Amount, e.At)
		case domain.UnmatchedFundsAssigned:
			if u := le.Unmatched; u != nil {
				addIn(u.Rail, u.Entry.EntryRef, u.Currency, u.Amount.Neg(), e.At)
			}
		case domain.PaymentTransferring:
			if le.Payment == nil || le.Payment.PayoutMethod == "" {
				continue
			}
			p := le.Payment // a payment records its payout intent once
			out = append(out, statement.Record{Rail: p.PayoutMethod, Ref: p.ID.String(), Direction: statement.Out, Amount: p.PayoutAmount,
				Currency: p.DestinationUnit(), Status: payoutStatus(*p), At: e.At})
		case domain.PaymentChangeRefundSent:
			if le.Payment != nil {
				out = append(out, refundRecord(e.Rail, e.IdempotencyKey, e.Amount, e.Currency, le.Payment.ChangeRefund, e.At))
			}
		case domain.UnmatchedFundsReturnSent:
			if le.Unmatched != nil {
				out = append(out, refundRecord(e.Rail, e.IdempotencyKey, e.Amount, e.Currency, le.Unmatched.Return, e.At))
			}
		}
	}
	for _, k := range inOrder {
		m := ins[k]
		switch m.net.Sign() {
		case 0:
			continue
		case 1:
			m.rec.Direction, m.rec.Amount = statement.In, m.net
		default:
			m.rec.Direction, m.rec.Amount = statement.Out, m.net.Neg()
		}
		out = append(out, m.rec)
	}
	slices.SortStableFunc(out, func(a, b statement.Record) int {
		return cmp.Or(cmp.Compare(a.Rail, b.Rail), cmp.Compare(a.Ref, b.Ref))
	})
	return out
}

// depositRef is the rail and the provider's reference of a deposit: the
// bank's entry, the reference the rail reported (an M-Pesa receipt, a
// USDT transfer, a sandbox deposit), else the Lightning invoice's hash,
// else "payment:<id>";
// for funds an operator assigned, the entry of the unmatched item they
// came from.
func depositRef(le ledgerEvent, source *domain.DepositSource, ref string) (string, string, bool) {
	p := le.Payment
	if p == nil {
		return "", "", false
	}
	switch {
	case source != nil && source.Entry != nil:
		return p.Funding, source.Entry.EntryRef, true
	case source != nil && source.UnmatchedID != nil:
		if le.Unmatched == nil {
			return "", "", false
		}
		return le.Unmatched.Rail, le.Unmatched.Entry.EntryRef, true
	case ref != "":
		return p.Funding, ref, true
	case p.LightningInvoice != nil:
		return p.Funding, p.LightningInvoice.PaymentHash, true
	}
	// A deposit the rail named no transfer for (recorded before its rail
	// reported one): its payment names it, so its break says where to look.
	return p.Funding, "payment:" + p.ID.String(), true
}

// refundRecord is a refund asked of a payout rail, with the rail's
// outcome as the refund's state holds it now: pending until it answered.
func refundRecord(rail, key string, amount decimal.Decimal, currency string, now *domain.PayerRefund, at time.Time) statement.Record {
	status := statement.Pending
	if now != nil && now.Outcome != "" {
		status = now.Outcome // the domain's outcomes are the statement's statuses
	}
	return statement.Record{Rail: rail, Ref: key, Direction: statement.Out, Amount: amount, Currency: currency, Status: status, At: at}
}

// payoutStatus is a payout's status as a provider would report it now.
func payoutStatus(p domain.Payment) string {
	switch {
	case p.Status == domain.StatusFailed:
		return statement.Failed
	case p.Status == domain.StatusSuccess && p.PayoutReversedAt != nil:
		return statement.Reversed
	case p.Status == domain.StatusSuccess:
		return statement.Success
	}
	return statement.Pending
}
