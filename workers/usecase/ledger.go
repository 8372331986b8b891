package usecase

import (
	"context"
	"io"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore"
	"github.com/ledger/ledger/projections"
	"github.com/ledger/ledger/workers/rails/ethereum"
	"github.com/ledger/ledger/workers/rails/lightning"
	"github.com/ledger/ledger/workers/rails/payout"
	"github.com/ledger/ledger/workers/rails/prices"
)

// Config holds the settings the use cases decide with.
type Config struct {
	Validity         domain.Validity // how long payments wait for funding, per rail
	OTCFeeRate       decimal.Decimal // otcFees = amount x OTCFeeRate
	Location         *time.Location  // Africa/Johannesburg, for South African business hours
	InsecureWebhooks bool            // accept http:// webhook URLs (sandbox)
	DocumentQuota    int64           // bytes of documents a tenant may store (LEDGER_TENANT_DOCUMENT_QUOTA); 0: no quota
	// PrivateWebhooks accepts private webhook targets (sandbox) with no DNS
	// lookup, so the sandbox works offline; otherwise a webhookUrl must be
	// https and resolve to public addresses only (contract §8).
	PrivateWebhooks bool
	// SealSecret seals a secret the service must use again later (a
	// payment's webhookSecret) before an event stores it, so that no read
	// API shows it (sealing.Sealer).
	SealSecret func(ctx context.Context, secret string) (string, error)
	// Appended is told of every command that appended to a payment's
	// stream (workers.Workers.Appended), once its events are committed.
	Appended func(ref domain.StreamRef, newDelivery, readyForPayout bool)
}

// Rails are the outside systems a new payment needs. Payments funded
// through a nil Node or Deposits (no production adapter) answer 503.
type Rails struct {
	Prices      prices.Source
	Node        lightning.Node // deposit invoices; the same payment id always gets the same payment hash
	Deposits    ethereum.Deposits
	Collections map[string]domain.CollectionAccount // our accounts bank transfers pay into, by currency
	// NoPayout names the payout methods (domain.PayoutBank, ...) no rail
	// pays in this mode: their payments are refused before any money can
	// arrive, instead of being funded and then stuck at their payout.
	NoPayout map[string]bool
	// NoFunding names the funding rails (domain.FundingMomo, ...) no
	// adapter takes deposits on in this mode: refused the same way.
	NoFunding map[string]bool
	// Banks lists the banks a bank merchant of country may name: in
	// production the payout provider's list; nil for the built-in one.
	Banks func(ctx context.Context, country string) ([]domain.Bank, error)
	// SandboxDeposits is the sandbox rail's book of the deposits it
	// delivered (payout.Sandbox); nil outside sandbox mode.
	SandboxDeposits interface {
		RecordDeposit(ctx context.Context, d payout.SandboxDeposit) error
	}
}

// Ledger runs the use cases on the event store, deciding on the read
// models, which it also serves.
type Ledger struct {
	*projections.Reader
	*projections.DeliveryLog // the webhook attempts, outside the events
	cfg                      Config
	store                    *eventstore.Store
	rails                    Rails
}

// PutDocument stores d unless its tenant's documents would pass the quota.
func (l *Ledger) PutDocument(ctx context.Context, d domain.StoredDocument, r io.Reader) (int64, string, error) {
	return l.PutDocumentWithin(ctx, d, r, l.cfg.DocumentQuota)
}

// New returns the use cases over store and its read models.
func New(cfg Config, store *eventstore.Store, reader *projections.Reader, rails Rails) *Ledger {
	return &Ledger{Reader: reader, DeliveryLog: projections.NewDeliveryLog(store.Pool()), cfg: cfg, store: store, rails: rails}
}
