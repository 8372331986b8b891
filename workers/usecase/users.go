package usecase

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore"
)

// CreateUser is POST /users: a new user, or (created false) the one that
// already has this email, compared trimmed and case-insensitively.
func (l *Ledger) CreateUser(ctx context.Context, tenantID uuid.UUID, email, name string,
	meta domain.Metadata) (u domain.UserSnapshot, created bool, err error) {
	if email, err = domain.NormaliseEmail(email); err != nil {
		return u, false, err
	}
	// Two requests creating the same email race on the read model's unique
	// email: the loser's append fails, and its second attempt finds the winner.
	for attempt := 0; ; attempt++ {
		id, err := l.UserIDByEmail(ctx, tenantID, email)
		created = domain.ErrorKind(err) == domain.NotFound
		if err != nil && !created {
			return u, false, err
		}
		if created {
			id = uuid.Must(uuid.NewV7())
		}
		u, err = l.executeUser(ctx, domain.StreamRef{TenantID: tenantID, Type: "user", ID: id}, meta,
			func(u domain.User) ([]domain.Event, error) {
				return domain.DecideCreateUser(u, domain.CreateUser{UserID: id, Email: email, Name: name})
			})
		if domain.ErrorKind(err) != domain.Conflict || !created || attempt > 0 {
			return u, created, err
		}
	}
}

// UpdateUser is PATCH /users/{userId}.
func (l *Ledger) UpdateUser(ctx context.Context, ref domain.StreamRef, cmd domain.UpdateUser, meta domain.Metadata) (domain.UserSnapshot, error) {
	return l.executeUser(ctx, ref, meta, func(u domain.User) ([]domain.Event, error) { return domain.DecideUpdateUser(u, cmd, time.Now()) })
}

// DisableUser is DELETE /users/{userId}.
func (l *Ledger) DisableUser(ctx context.Context, ref domain.StreamRef, meta domain.Metadata) (domain.UserSnapshot, error) {
	return l.executeUser(ctx, ref, meta, domain.DecideDisableUser)
}

// UploadKYCDocument records a KYC document, already stored, on its user.
func (l *Ledger) UploadKYCDocument(ctx context.Context, ref domain.StreamRef, cmd domain.UploadKYCDocument,
	meta domain.Metadata) (domain.UserSnapshot, error) {
	return l.executeUser(ctx, ref, meta, func(u domain.User) ([]domain.Event, error) { return domain.DecideUploadKYCDocument(u, cmd) })
}

// UpdateProfile is PATCH /profile.
func (l *Ledger) UpdateProfile(ctx context.Context, ref domain.StreamRef, patch domain.ProfilePatch, meta domain.Metadata) (domain.UserSnapshot, error) {
	return l.executeUser(ctx, ref, meta, func(u domain.User) ([]domain.Event, error) { return domain.DecideUpdateProfile(u, patch) })
}

// AddMomoAccount is POST /profile/momo: the account gets a new id.
func (l *Ledger) AddMomoAccount(ctx context.Context, ref domain.StreamRef, cmd domain.AddMomoAccount, meta domain.Metadata) (domain.UserSnapshot, error) {
	cmd.AccountID = uuid.Must(uuid.NewV7())
	return l.executeUser(ctx, ref, meta, func(u domain.User) ([]domain.Event, error) { return domain.DecideAddMomoAccount(u, cmd) })
}

// UpdateMomoAccount is PATCH /profile/momo/{id}.
func (l *Ledger) UpdateMomoAccount(ctx context.Context, ref domain.StreamRef, cmd domain.UpdateMomoAccount, meta domain.Metadata) (domain.UserSnapshot, error) {
	return l.executeUser(ctx, ref, meta, func(u domain.User) ([]domain.Event, error) { return domain.DecideUpdateMomoAccount(u, cmd) })
}

// RemoveMomoAccount is DELETE /profile/momo/{id}.
func (l *Ledger) RemoveMomoAccount(ctx context.Context, ref domain.StreamRef, accountID uuid.UUID, meta domain.Metadata) (domain.UserSnapshot, error) {
	return l.executeUser(ctx, ref, meta, func(u domain.User) ([]domain.Event, error) { return domain.DecideRemoveMomoAccount(u, accountID) })
}

// executeUser runs a command on the user aggregate through the event store.
func (l *Ledger) executeUser(ctx context.Context, ref domain.StreamRef, meta domain.Metadata,
	decide func(domain.User) ([]domain.Event, error)) (domain.UserSnapshot, error) {
	snap, err := eventstore.ExecuteSnapshot(ctx, l.store, ref, meta, domain.ApplyUser, decide)
	if err != nil {
		return domain.UserSnapshot{}, err
	}
	return domain.UserSnapshot{User: snap.State, RecordID: snap.FirstEventID, Version: snap.Version,
		CreatedAt: snap.CreatedAt, UpdatedAt: snap.UpdatedAt}, nil
}
