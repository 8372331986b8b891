package workers

import (
	"testing"

	"github.com/google/uuid"
)

// TestSettledHereIsBounded checks that settledHere holds what was added
// lately and forgets the oldest once two generations are full.
func TestSettledHereIsBounded(t *testing.T) {
	s := newSettledHere()
	ids := make([]uuid.UUID, 2*settledGeneration+1)
	for i := range ids {
		ids[i] = uuid.New()
		s.add(ids[i])
	}
	if s.has(ids[0]) {
		t.Error("the first payment is still held after two full generations, want it forgotten")
	}
	for _, i := range []int{settledGeneration, 2 * settledGeneration} {
		if !s.has(ids[i]) {
			t.Errorf("payment %d of %d: not held, want held", i, len(ids))
		}
	}
	if s.has(uuid.New()) {
		t.Error("a payment never added is held")
	}
	if n := len(s.current) + len(s.older); n > 2*settledGeneration {
		t.Errorf("holds %d payments, want at most %d", n, 2*settledGeneration)
	}
}
