package workers

import (
	"sync"

	"github.com/google/uuid"
)

// settledHere remembers the payments whose payout result (success or
// failure, both final) this process recorded, so their deposited and
// transferring messages, which then have nothing left to do, are acked
// without reading the payment: after the fast path, that is most of them.
// It only ever skips work that a read would find done; a payment it does
// not hold (settled elsewhere, or forgotten) is read as before.
//
// It holds two generations of at most settledGeneration payments each: a
// full current generation becomes the previous one, and the previous one
// is forgotten, so memory stays bounded however many payments settle.
type settledHere struct {
	mu             sync.Mutex
	current, older map[uuid.UUID]struct{}
}

const settledGeneration = 50_000

func newSettledHere() *settledHere {
	return &settledHere{current: map[uuid.UUID]struct{}{}}
}

func (s *settledHere) add(payment uuid.UUID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.current) >= settledGeneration {
		s.older, s.current = s.current, make(map[uuid.UUID]struct{}, settledGeneration)
	}
	s.current[payment] = struct{}{}
}

func (s *settledHere) has(payment uuid.UUID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, inCurrent := s.current[payment]
	_, inOlder := s.older[payment]
	return inCurrent || inOlder
}
