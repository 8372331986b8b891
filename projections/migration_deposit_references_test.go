package projections

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/eventstore"
)

// TestDepositReferencesMigrationFindsEarlierPayments: migration 0021
// records the deposit reference of every bank-transfer payment made
// before it, so a credit for one of them finds it.
func TestDepositReferencesMigrationFindsEarlierPayments(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool := databaseBefore(ctx, t, "0021")
	tenant, bank, lightning := uuid.New(), uuid.New(), uuid.New()
	ref := domain.DepositReference(bank)
	at := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	_, err := pool.Exec(ctx, `INSERT INTO payments (id, tenant_id, user_id, merchant_id, status, state, version, created_at, updated_at) VALUES
		($1::uuid, $3::uuid, $3, $3, 'created', json_build_object('id', $1::text, 'funding', 'BANK_TRANSFER', 'status', 'created',
			'depositCurrency', 'EUR', 'depositDetails', json_build_object('reference', $4::text, 'currency', 'EUR')), 1, $5, $5),
		($2::uuid, $3, $3, $3, 'created', json_build_object('id', $2::text, 'funding', 'LIGHTNING', 'status', 'created'), 1, $5, $5)`,
		bank.String(), lightning.String(), tenant.String(), ref, at)
	if err != nil {
		t.Fatal(err)
	}
	if err := eventstore.Migrate(ctx, pool, eventstore.Migrations, eventstore.MigrationSet{Component: "projections", FS: Migrations}); err != nil {
		t.Fatal(err)
	}
	got, err := NewReader(pool).PaymentsByDepositReference(ctx, []string{ref, "LDGNOSUCHREF0"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Payment.ID != bank || got[0].TenantID != tenant || got[0].Version != 1 {
		t.Errorf("got %+v, want the bank-transfer payment only", got)
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM deposit_references`).Scan(&n); err != nil || n != 1 {
		t.Errorf("deposit_references: got %d rows (%v), want 1", n, err)
	}
}
