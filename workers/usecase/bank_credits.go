package usecase

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/google/uuid"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore"
	"github.com/ledger/ledger/projections"
	"github.com/ledger/ledger/workers/rails/camt"
)

// Stream types of this file's aggregates.
const (
	paymentStream   = "payment"
	unmatchedStream = "unmatched_funds"
)

// Outcomes of a bank credit.
const (
	CreditDeposited = "deposited" // the credit funded a payment (in part or in full); any excess is unmatched
	CreditUnmatched = "unmatched" // the whole credit is held as unmatched funds
	CreditDuplicate = "duplicate" // the bank's entry was recorded before: nothing done
)

// CreditResult is what recording one bank credit did.
type CreditResult struct {
	Entry       domain.BankEntry `json:"entry"`
	Outcome     string           `json:"outcome"`
	PaymentID   *uuid.UUID       `json:"paymentId,omitempty"`
	Status      string           `json:"paymentStatus,omitempty"` // the payment's status after the deposit
	UnmatchedID *uuid.UUID       `json:"unmatchedFundsId,omitempty"`
	Reason      string           `json:"reason,omitempty"` // why funds are unmatched
}

// RecordBankCredit records a credit the bank reported, once whatever is
// re-sent: on the payment whose deposit reference it quotes, what the
// payment cannot take as unmatched funds, both in one append with the
// entry's bank_credits row, whose unique key refuses a second recording
// (a concurrent import of the same entry loses the append and then finds
// the entry recorded).
func (l *Ledger) RecordBankCredit(ctx context.Context, c domain.BankCredit, meta domain.Metadata) (CreditResult, error) {
	res := CreditResult{Entry: c.Entry}
	for attempt := 0; ; attempt++ {
		done, err := l.BankCreditRecorded(ctx, c.Entry)
		if err != nil {
			return res, err
		}
		if done {
			res.Outcome = CreditDuplicate
			return res, nil
		}
		matches, err := l.PaymentsByDepositReference(ctx, c.References)
		if err != nil {
			return res, err
		}
		cands := make([]domain.TenantPayment, len(matches))
		for i, m := range matches {
			cands[i] = domain.TenantPayment{TenantID: m.TenantID, Payment: m.Payment}
		}
		id, err := uuid.NewV7()
		if err != nil {
			return res, fmt.Errorf("unmatched funds id: %w", err)
		}
		out, err := domain.DecideBankCredit(domain.ReceiveBankCredit{Credit: c, Matches: cands, UnmatchedID: id, Now: time.Now()})
		if err != nil {
			return res, err
		}
		var batches []eventstore.Batch
		var pay projections.TenantPaymentSnapshot
		if out.Payment != nil {
			pay = matches[0]
			batches = append(batches, paymentBatch(pay, out.Payment))
		}
		if out.Unmatched != nil {
			batches = append(batches, eventstore.Batch{Stream: domain.StreamRef{TenantID: out.UnmatchedTenant, Type: unmatchedStream, ID: id},
				Events: out.Unmatched})
		}
		_, err = l.store.Append(ctx, meta, batches...)
		if errors.Is(err, eventstore.ErrVersionConflict) && attempt < 2 {
			continue // the payment moved, or the entry was just recorded: decide again
		}
		if err != nil {
			return res, fmt.Errorf("record bank entry %s: %w", c.Entry.EntryRef, err)
		}
		res.Outcome = CreditUnmatched
		if out.Payment != nil {
			res.Outcome, res.PaymentID = CreditDeposited, &pay.Payment.ID
			res.Status = l.paymentAppended(ctx, pay, out.Payment)
		}
		if out.Unmatched != nil {
			res.UnmatchedID, res.Reason = &id, out.Unmatched[0].(domain.UnmatchedFundsReceived).Reason
		}
		return res, nil
	}
}

// paymentBatch appends events to a payment at the version they were
// decided on.
func paymentBatch(p projections.TenantPaymentSnapshot, events []domain.Event) eventstore.Batch {
	return eventstore.Batch{Stream: domain.StreamRef{TenantID: p.TenantID, Type: paymentStream, ID: p.Payment.ID},
		Expected: p.Version, Events: events, State: p.Payment}
}

// paymentAppended tells the workers (when this process runs them; ledgerctl
// does not, and the payment's events then drive its next steps) that
// events were appended to p, and returns p's status after them.
func (l *Ledger) paymentAppended(ctx context.Context, p projections.TenantPaymentSnapshot, events []domain.Event) string {
	after := p.Payment
	for _, e := range events {
		after = domain.ApplyPayment(after, e)
	}
	if l.cfg.Appended != nil {
		ref := domain.StreamRef{TenantID: p.TenantID, Type: paymentStream, ID: p.Payment.ID}
		delivery := after.Status != p.Payment.Status && after.WebhookURL != ""
		ready := !p.Payment.AwaitsPayout() && after.AwaitsPayout()
		eventstore.AfterCommit(ctx, func() { l.cfg.Appended(ref, delivery, ready) })
	}
	return after.Status
}

// AssignResult is what an assignment did.
type AssignResult struct {
	PaymentID     uuid.UUID  `json:"paymentId"`
	PaymentStatus string     `json:"paymentStatus"`
	ExcessID      *uuid.UUID `json:"excessUnmatchedFundsId,omitempty"` // the new item holding what the payment could not take
}

// AssignUnmatched gives an open unmatched item to a payment (of any
// tenant for the operator's items), which takes it as a deposit quoting
// its reference would have; by names the operator. The item's event, the
// deposit and any excess are one append.
func (l *Ledger) AssignUnmatched(ctx context.Context, id, paymentID uuid.UUID, by string, meta domain.Metadata) (AssignResult, error) {
	for attempt := 0; ; attempt++ {
		u, err := l.Unmatched(ctx, id)
		if err != nil {
			return AssignResult{}, err
		}
		pay, err := l.PaymentOfAnyTenant(ctx, paymentID)
		if err != nil {
			return AssignResult{}, err
		}
		excessID, err := uuid.NewV7()
		if err != nil {
			return AssignResult{}, fmt.Errorf("unmatched funds id: %w", err)
		}
		out, err := domain.DecideAssignUnmatched(u.UnmatchedFunds, domain.AssignUnmatched{Payment: pay.Payment, Tenant: pay.TenantID,
			By: by, UnmatchedID: excessID, Now: time.Now()})
		if err != nil {
			return AssignResult{}, err
		}
		batches := []eventstore.Batch{
			{Stream: domain.StreamRef{TenantID: u.TenantID, Type: unmatchedStream, ID: u.ID}, Expected: u.Version, Events: out.Item, State: u.UnmatchedFunds},
			paymentBatch(pay, out.Payment),
		}
		if out.Unmatched != nil {
			batches = append(batches, eventstore.Batch{Stream: domain.StreamRef{TenantID: pay.TenantID, Type: unmatchedStream, ID: excessID},
				Events: out.Unmatched})
		}
		_, err = l.store.Append(ctx, meta, batches...)
		if errors.Is(err, eventstore.ErrVersionConflict) && attempt == 0 {
			continue
		}
		if err != nil {
			return AssignResult{}, fmt.Errorf("assign unmatched funds %s: %w", id, err)
		}
		res := AssignResult{PaymentID: paymentID, PaymentStatus: l.paymentAppended(ctx, pay, out.Payment)}
		if out.Unmatched != nil {
			res.ExcessID = &excessID
		}
		return res, nil
	}
}

// ReturnUnmatched marks an open unmatched item for return to the payer's
// account as the bank reported it; by names the operator. ledgerd's
// workers then pay it back when a payout rail can (domain.DecideSendReturn).
func (l *Ledger) ReturnUnmatched(ctx context.Context, id uuid.UUID, by string, meta domain.Metadata) (domain.UnmatchedFunds, error) {
	return l.ExecuteUnmatched(ctx, id, meta, func(u domain.UnmatchedFunds) ([]domain.Event, error) {
		return domain.DecideReturnUnmatched(u, domain.ReturnUnmatched{By: by, Now: time.Now()})
	})
}

// ResolveReturnPayout ends the return of unmatched funds its rail cannot
// account for, as an operator found it at the provider
// (domain.DecideResolveReturnPayout); the caller records the same outcome
// on the payout rail's books first.
func (l *Ledger) ResolveReturnPayout(ctx context.Context, id uuid.UUID, c domain.ResolvePayout, meta domain.Metadata) (domain.UnmatchedFunds, error) {
	return l.ExecuteUnmatched(ctx, id, meta, func(u domain.UnmatchedFunds) ([]domain.Event, error) {
		c.Now = time.Now()
		return domain.DecideResolveReturnPayout(u, c)
	})
}

// ExecuteUnmatched runs a command on an unmatched item's stream, in the
// books of whichever tenant holds it.
func (l *Ledger) ExecuteUnmatched(ctx context.Context, id uuid.UUID, meta domain.Metadata,
	decide func(domain.UnmatchedFunds) ([]domain.Event, error)) (domain.UnmatchedFunds, error) {
	u, err := l.Unmatched(ctx, id)
	if err != nil {
		return domain.UnmatchedFunds{}, err
	}
	load := func(ctx context.Context) (eventstore.Snapshot[domain.UnmatchedFunds], error) {
		u, err := l.Unmatched(ctx, id)
		return eventstore.Snapshot[domain.UnmatchedFunds]{State: u.UnmatchedFunds, Version: u.Version}, err
	}
	snap, err := eventstore.ExecuteFrom(ctx, l.store, domain.StreamRef{TenantID: u.TenantID, Type: unmatchedStream, ID: id}, meta, load,
		domain.ApplyUnmatched, decide)
	return snap.State, err
}

// ImportReport is what importing a camt file did, entry by entry.
type ImportReport struct {
	Message string         `json:"message"` // camt.054 or camt.053
	Credits []CreditResult `json:"credits"`
	Skipped []camt.Skipped `json:"skipped"` // entries that are not credits to record (debits, reversals, pending)
}

// ImportCamt records every credit of a camt.054 notification or camt.053
// statement (RecordBankCredit). A file imported again, or a statement
// repeating the day's notifications, records nothing twice; an import cut
// short is finished by importing the file again.
func (l *Ledger) ImportCamt(ctx context.Context, r io.Reader, meta domain.Metadata) (ImportReport, error) {
	f, err := camt.Parse(r)
	if err != nil {
		return ImportReport{}, &domain.Error{Kind: domain.Invalid, Code: "camt_invalid", Message: err.Error(), Err: err}
	}
	rep := ImportReport{Message: f.Message, Credits: make([]CreditResult, 0, len(f.Credits)), Skipped: f.Skipped}
	if rep.Skipped == nil {
		rep.Skipped = []camt.Skipped{}
	}
	for _, c := range f.Credits {
		res, err := l.RecordBankCredit(ctx, domain.BankCredit{Entry: domain.BankEntry{Account: c.Account, EntryRef: c.EntryRef},
			Amount: c.Amount, Currency: c.Currency, References: c.References, DebtorName: c.DebtorName,
			DebtorAccount: c.DebtorIBAN, DebtorBank: c.DebtorBank}, meta)
		if err != nil {
			return rep, err
		}
		rep.Credits = append(rep.Credits, res)
	}
	return rep, nil
}

// RecordRailFunds opens an unmatched item for money a rail other than the
// bank's delivered that no payment took, once however often the rail
// reports it: its entry (rail, account, provider's reference) is recorded
// in the transaction of its event, as a bank entry is. It returns the
// item's id, or nil when the money was recorded before.
func (l *Ledger) RecordRailFunds(ctx context.Context, f domain.RailFunds, meta domain.Metadata) (*uuid.UUID, error) {
	for attempt := 0; ; attempt++ {
		id, err := uuid.NewV7()
		if err != nil {
			return nil, fmt.Errorf("unmatched funds id: %w", err)
		}
		events, err := domain.DecideRailFunds(f, id, time.Now())
		if err != nil {
			return nil, err
		}
		done, err := l.BankCreditRecorded(ctx, events[0].(domain.UnmatchedFundsReceived).Entry)
		if err != nil || done {
			return nil, err
		}
		_, err = l.store.Append(ctx, meta, eventstore.Batch{Stream: domain.StreamRef{TenantID: f.TenantID, Type: unmatchedStream, ID: id},
			Events: events})
		if errors.Is(err, eventstore.ErrVersionConflict) && attempt < 2 {
			continue // recorded meanwhile by another report of the same money: found on the next look
		}
		if err != nil {
			return nil, fmt.Errorf("record %s funds %s: %w", f.Rail, f.Reference, err)
		}
		return &id, nil
	}
}
