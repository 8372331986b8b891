package main

import (
	"context"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore"
	"github.com/ledger/ledger/projections"
)

// users plugs the event store and the users read model into httpapi.Users.
type users struct {
	*projections.Reader
	store *eventstore.Store
}

// ExecuteUser runs a command on the user aggregate through the event store.
func (u users) ExecuteUser(ctx context.Context, ref domain.StreamRef, meta domain.Metadata,
	decide func(domain.User) ([]domain.Event, error)) (domain.UserSnapshot, error) {
	snap, err := eventstore.ExecuteSnapshot(ctx, u.store, ref, meta, domain.ApplyUser, decide)
	if err != nil {
		return domain.UserSnapshot{}, err
	}
	return domain.UserSnapshot{User: snap.State, RecordID: snap.FirstEventID, Version: snap.Version,
		CreatedAt: snap.CreatedAt, UpdatedAt: snap.UpdatedAt}, nil
}
