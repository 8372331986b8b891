package workers

import (
	"testing"

	"github.com/google/uuid"
)

// TestSendingPayments walks the hand-over of a payment's next delivery to
// the goroutine sending its webhooks.
func TestSendingPayments(t *testing.T) {
	p, other := uuid.New(), uuid.New()
	s := newSendingPayments()

	if !s.enterUnlessBusy(p) {
		t.Fatal("first delivery of an idle payment: enterUnlessBusy = false, want true (this goroutine sends it)")
	}
	if s.announced(p) {
		t.Fatal("nothing announced since the claim: announced = true, want false (the record leases nothing)")
	}
	if !s.enterUnlessBusy(other) {
		t.Fatal("another payment is not busy because p is")
	}
	if s.enterUnlessBusy(p) {
		t.Fatal("second delivery while p is being sent: enterUnlessBusy = true, want false (handed to the sender)")
	}
	if !s.announced(p) || s.announced(other) || s.announced(uuid.New()) {
		t.Fatal("announced: want true for p only (its sender's record leases the next)")
	}
	if !s.claimNext(p) {
		t.Fatal("after the hand-over: claimNext = false, want true")
	}
	if s.claimNext(p) {
		t.Fatal("nothing new since the last claim: claimNext = true, want false")
	}
	if !s.enterUnlessBusy(p) {
		t.Fatal("the sender left on claimNext = false: a new delivery is this goroutine's again")
	}
	// The record of a 2xx leased the next delivery itself: what was
	// announced before is in hand, and the sender stays.
	if s.enterUnlessBusy(p) {
		t.Fatal("second delivery while p is being sent: enterUnlessBusy = true, want false")
	}
	s.claimedNext(p)
	if s.claimNext(p) {
		t.Fatal("after claimedNext: claimNext = true, want false")
	}
	if !s.enterUnlessBusy(p) {
		t.Fatal("the sender left on claimNext = false: a new delivery is this goroutine's again")
	}

	// Two goroutines on one payment (the dispatcher and the fast path): it
	// stays busy until both have left, and one of them takes the hand-over.
	s.enter(p)
	if s.enterUnlessBusy(p) {
		t.Fatal("busy payment: enterUnlessBusy = true, want false")
	}
	s.leave(p)
	if !s.claimNext(p) {
		t.Fatal("the remaining goroutine: claimNext = false, want true")
	}
	s.leave(p)
	s.leave(other)
	if len(s.busy) != 0 {
		t.Errorf("after every goroutine left: %d payments busy, want 0", len(s.busy))
	}
}
