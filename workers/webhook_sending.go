package workers

import (
	"sync"

	"github.com/google/uuid"
)

// sendingPayments knows which payments' webhooks a goroutine of this process
// is sending, so the next delivery of such a payment is claimed by that
// goroutine once the one in hand is delivered, and by nobody before: a
// claim made meanwhile would only find the earlier delivery still pending
// and get nothing, and a claim after every delivery mostly finds nothing
// too. Both cost a round trip to Postgres per status.
//
// It is an optimisation only. A delivery that nobody here claims (its
// status was written by another process, or came while nobody here was
// sending) is the dispatcher's to claim at its next poll.
type sendingPayments struct {
	mu   sync.Mutex
	busy map[uuid.UUID]*paymentSender
}

type paymentSender struct {
	at   int  // goroutines sending the payment's webhooks
	more bool // a status change here wrote a newer delivery since the last claim
}

func newSendingPayments() *sendingPayments {
	return &sendingPayments{busy: map[uuid.UUID]*paymentSender{}}
}

// enter records a goroutine sending payment's webhooks.
func (s *sendingPayments) enter(payment uuid.UUID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.enterLocked(payment)
}

func (s *sendingPayments) enterLocked(payment uuid.UUID) {
	p := s.busy[payment]
	if p == nil {
		p = &paymentSender{}
		s.busy[payment] = p
	}
	p.at++
}

// enterUnlessBusy is enter for a new delivery of payment, unless a
// goroutine sends its webhooks already: that one is told to claim it next,
// and enterUnlessBusy reports false.
func (s *sendingPayments) enterUnlessBusy(payment uuid.UUID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.busy[payment]; p != nil {
		p.more = true
		return false
	}
	s.enterLocked(payment)
	return true
}

// claimNext says whether a goroutine that delivered one of payment's
// webhooks should claim the next: true when a newer delivery was written
// here since. When false, the goroutine has left (in the same critical
// section, so no newer delivery can be announced to a goroutine that is
// leaving).
func (s *sendingPayments) claimNext(payment uuid.UUID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.busy[payment]
	if p.more {
		p.more = false
		return true
	}
	s.leaveLocked(payment, p)
	return false
}

// announced says whether a status change here wrote a newer delivery of
// payment since the last claim: only then is the next delivery leased
// with the record of the one in hand. Leasing it every time found nothing
// after most records (after payment.created the deposit is still to
// come, after a final status nothing follows) and cost each a statement.
// A newer delivery another process wrote is that process's to send
// (its fast path), or the dispatchers' after the handoff.
func (s *sendingPayments) announced(payment uuid.UUID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.busy[payment]
	return p != nil && p.more
}

// claimedNext tells that a goroutine sending payment's webhooks has
// claimed the next one: the newer deliveries announced so far are that
// one, or will be looked for when it is recorded.
func (s *sendingPayments) claimedNext(payment uuid.UUID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.busy[payment].more = false
}

// leave records that a goroutine stopped sending payment's webhooks.
func (s *sendingPayments) leave(payment uuid.UUID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.leaveLocked(payment, s.busy[payment])
}

func (s *sendingPayments) leaveLocked(payment uuid.UUID, p *paymentSender) {
	if p.at--; p.at == 0 {
		delete(s.busy, payment)
	}
}
