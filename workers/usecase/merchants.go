package usecase

import (
	"context"

	"github.com/google/uuid"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore"
)

// CreateMerchant is POST /merchants: the merchant gets a new id.
func (l *Ledger) CreateMerchant(ctx context.Context, tenantID uuid.UUID, cmd domain.CreateMerchant,
	meta domain.Metadata) (domain.MerchantSnapshot, error) {
	cmd.MerchantID = uuid.Must(uuid.NewV7())
	if _, bankCountry := domain.Banks(cmd.Country); bankCountry && l.rails.Banks != nil && cmd.PhoneNumber == "" {
		banks, err := l.rails.Banks(ctx, cmd.Country)
		if err != nil {
			return domain.MerchantSnapshot{}, &domain.Error{Kind: domain.Unavailable, Code: "rail_unavailable",
				Message: "the bank list of the payout rail is not available right now; retry shortly", Err: err}
		}
		cmd.Banks = banks
	}
	snap, err := eventstore.CreateSnapshot(ctx, l.store, domain.StreamRef{TenantID: tenantID, Type: "merchant", ID: cmd.MerchantID},
		meta, domain.ApplyMerchant, func(m domain.Merchant) ([]domain.Event, error) { return domain.DecideCreateMerchant(m, cmd) })
	if err != nil {
		return domain.MerchantSnapshot{}, err
	}
	return domain.MerchantSnapshot{Merchant: snap.State, Version: snap.Version,
		CreatedAt: snap.CreatedAt, UpdatedAt: snap.UpdatedAt}, nil
}
