package payout

import (
	"context"
	"fmt"
)

// ByRail routes each payout to the rail configured for its Request.Rail
// (BANK, MOMO or LIGHTNING). A destination with no rail answers ErrNoRail:
// the payout waits, retried and then parked, rather than pretending.
type ByRail map[string]Rail

// Payout calls r's rail.
func (m ByRail) Payout(ctx context.Context, r Request) (Outcome, error) {
	rail, ok := m[r.Rail]
	if !ok {
		return Outcome{}, fmt.Errorf("%s payout: %w", r.Rail, ErrNoRail)
	}
	return rail.Payout(ctx, r)
}
