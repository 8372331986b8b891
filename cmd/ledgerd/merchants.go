package main

import (
	"context"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore"
	"github.com/ledger/ledger/projections"
)

// merchants plugs the event store and the merchants read model into httpapi.Merchants.
type merchants struct {
	*projections.Reader
	store *eventstore.Store
}

// CreateMerchant appends a new merchant's first events through the event store.
func (m merchants) CreateMerchant(ctx context.Context, ref domain.StreamRef, meta domain.Metadata,
	decide func(domain.Merchant) ([]domain.Event, error)) (domain.MerchantSnapshot, error) {
	snap, err := eventstore.CreateSnapshot(ctx, m.store, ref, meta, domain.ApplyMerchant, decide)
	if err != nil {
		return domain.MerchantSnapshot{}, err
	}
	return domain.MerchantSnapshot{Merchant: snap.State, Version: snap.Version,
		CreatedAt: snap.CreatedAt, UpdatedAt: snap.UpdatedAt}, nil
}
