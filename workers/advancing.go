package workers

import (
	"context"
	"sync"
	"time"

	"github.com/google/uuid"
)

// advancingHere holds the payments whose conversion this process's fast
// path is making (runNow). Their deposited message often arrives
// meanwhile: the relay's hop takes about as long as a conversion. Read at
// once, the payment is still deposited, so the message would run the step
// itself, wait behind the conversion's stream lock and read the payment
// again, only to find it converted: two reads per payment. Waiting for the
// conversion instead, the message then finds the payment among those paid
// out or settled here, and reads nothing. A conversion still queued is not
// waited for: under load the queue may be long, and the message would wait
// for it rather than take its step. It is an optimisation only: a message
// that waited in vain (the conversion failed, or took longer than
// advanceWait) reads the payment as before.
type advancingHere struct {
	mu       sync.Mutex
	payments map[uuid.UUID]*advancing
}

type advancing struct {
	steps int           // conversions queued or running
	done  chan struct{} // closed when the last of them is decided
}

// advanceWait bounds a message's wait for a conversion here: the price
// feed or Postgres may be slow, and the message's own step, which waits
// behind the conversion's stream lock anyway, is the durable path.
const advanceWait = 2 * time.Second

func newAdvancingHere() *advancingHere { return &advancingHere{payments: map[uuid.UUID]*advancing{}} }

// start records a conversion of payment starting here.
func (a *advancingHere) start(payment uuid.UUID) {
	a.mu.Lock()
	defer a.mu.Unlock()
	p := a.payments[payment]
	if p == nil {
		p = &advancing{done: make(chan struct{})}
		a.payments[payment] = p
	}
	p.steps++
}

// decided records that one conversion of payment started here is decided
// (recorded, or not made); the waiters go on once the last one is.
func (a *advancingHere) decided(payment uuid.UUID) {
	a.mu.Lock()
	defer a.mu.Unlock()
	p := a.payments[payment]
	if p == nil {
		return
	}
	if p.steps--; p.steps == 0 {
		close(p.done)
		delete(a.payments, payment)
	}
}

// wait returns once no conversion of payment is queued or running here,
// advanceWait has passed, or ctx ends.
func (a *advancingHere) wait(ctx context.Context, payment uuid.UUID) {
	a.mu.Lock()
	p := a.payments[payment]
	a.mu.Unlock()
	if p == nil {
		return
	}
	t := time.NewTimer(advanceWait)
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
	case <-ctx.Done():
	}
}
