package workers

import (
	"sync"
	"time"

	"github.com/google/uuid"
)

// payingHere holds the payments this process converted and is paying out
// now (beginPayout), with their conversion time. Their transferring
// message usually arrives meanwhile, and would read the payment's status,
// then the payment, only to hand itself back for what is left of
// PayoutGrace (takeOverPayout), as most of them do under load
// (docs/performance.md, "Lifecycle"). While the payment is held here that
// answer is known without the reads, and so is its deposited message's:
// the conversion is recorded. A payment not held (paid
// out elsewhere, or its call over) is read as before.
type payingHere struct {
	mu       sync.Mutex
	payments map[uuid.UUID]time.Time
}

func newPayingHere() *payingHere { return &payingHere{payments: map[uuid.UUID]time.Time{}} }

// start records that the payment, converted at convertedAt, is being paid out here.
func (p *payingHere) start(payment uuid.UUID, convertedAt time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.payments[payment] = convertedAt
}

// done records that the payout call here is over, whatever its outcome.
func (p *payingHere) done(payment uuid.UUID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.payments, payment)
}

// convertedAt returns the conversion time of a payment being paid out here.
func (p *payingHere) convertedAt(payment uuid.UUID) (time.Time, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	at, ok := p.payments[payment]
	return at, ok
}
