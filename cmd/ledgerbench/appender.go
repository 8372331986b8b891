package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync/atomic"

	"github.com/google/uuid"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore"
)

// appender drives eventstore.Store.Append the way the API does, with one
// tenant stream per worker. Each worker appends only to its own stream and
// remembers the version it last wrote, so there are no version conflicts
// and no retries: the figures are the cost of the write path itself
// (event insert, inline projection, commit), not of contention.
//
// The event is tenant.api_key_created because its inline projection is
// cheap and conflict-free: one INSERT into api_keys (a new random key, so
// no unique clash; its tenant exists, so the foreign key holds) and one
// UPDATE of the worker's own tenants row.
type appender struct {
	store    *eventstore.Store
	meta     domain.Metadata
	streams  []domain.StreamRef
	versions []int           // versions[w] is written only by worker w
	states   []domain.Tenant // states[w]: worker w's tenant, as its key events are decided on
	appended *atomic.Int64   // every event appended, setup included, for the relay check
	// committed, when set, is told the events of each timed append once
	// Append has returned (the relay watcher's commit-to-subscriber lag).
	committed func([]domain.Record)
}

// newAppender creates workers tenants through the real decision and append
// path, so their rows (tenants, users, api_keys, events) are what the API
// would have written.
func newAppender(ctx context.Context, store *eventstore.Store, meta domain.Metadata, workers int, appended *atomic.Int64) (*appender, error) {
	a := &appender{store: store, meta: meta, streams: make([]domain.StreamRef, workers),
		versions: make([]int, workers), states: make([]domain.Tenant, workers), appended: appended}
	for w := range workers {
		id, owner := uuid.New(), uuid.New()
		key := newAPIKeyEvent()
		tenantEvents, ownerEvents, err := domain.DecideCreateTenant(domain.CreateTenant{
			TenantID: id, OwnerUserID: owner, Name: fmt.Sprintf("ledgerbench tenant %d", w),
			OwnerEmail: "owner-" + id.String() + "@ledgerbench.invalid", APIKey: key.APIKey, SecretHash: key.SecretHash,
		})
		if err != nil {
			return nil, fmt.Errorf("decide tenant %d: %w", w, err)
		}
		tenant := domain.StreamRef{TenantID: id, Type: "tenant", ID: id}
		recs, err := store.Append(ctx, meta,
			eventstore.Batch{Stream: tenant, Events: tenantEvents},
			eventstore.Batch{Stream: domain.StreamRef{TenantID: id, Type: "user", ID: owner}, Events: ownerEvents})
		if err != nil {
			return nil, fmt.Errorf("create tenant %d: %w", w, err)
		}
		appended.Add(int64(len(recs)))
		a.streams[w], a.versions[w] = tenant, len(tenantEvents)
		for _, e := range tenantEvents {
			a.states[w] = domain.ApplyTenant(a.states[w], e)
		}
	}
	return a, nil
}

// op appends one tenant.api_key_created event to worker w's stream.
func (a *appender) op(ctx context.Context, w int) error {
	recs, err := a.store.Append(ctx, a.meta, eventstore.Batch{
		Stream: a.streams[w], Expected: a.versions[w], State: a.states[w], Events: []domain.Event{newAPIKeyEvent()}})
	if err != nil {
		return fmt.Errorf("append to %s: %w", a.streams[w].ID, err)
	}
	if a.committed != nil {
		a.committed(recs)
	}
	a.versions[w]++
	a.appended.Add(1)
	return nil
}

// newAPIKeyEvent returns an api key event with a fresh random key and a
// secret hash of realistic length (64 hex digits).
func newAPIKeyEvent() domain.APIKeyCreated {
	return domain.APIKeyCreated{APIKey: "lb_" + randomHex(16), SecretHash: randomHex(32)}
}

// randomHex returns 2n random lower-case hex digits.
func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
