package workers

import (
	"context"
	"sync"

	"github.com/google/uuid"

	"github.com/ledger/ledger/domain"
)

// The workers react to a payment's events once they have been sequenced,
// published and delivered by JetStream: a relay hop that, on a busy
// machine, is most of a payment's time from deposit to payout and from a
// status change to its webhook. Appended lets the process whose command
// appended them start the next step at once. The messages still arrive,
// find the payment moved on and do nothing, and stay what makes every step
// durable: this is best effort (a full queue, a failure or a crash just
// leaves the step to the message, or to the dispatcher's next claim).

const (
	// nowQueue bounds the payments waiting for one of the goroutines
	// below; beyond it a request is dropped (the message takes the step).
	nowQueue = 1024
	// advancers is how many payments this process converts and pays out
	// at once on Appended's word: each waits on its appends' commits and
	// the payout rail, and with 8 of them a saturated process dropped
	// most payouts from the full queue, leaving each to its deposited
	// message (a relay hop, a status read, and seconds more for the
	// payment). webhookClaimers is how many claims of announced
	// deliveries it has in flight, each for every payment waiting
	// (sendAnnounced); the sends themselves are bounded by the send slots.
	advancers       = 32
	webhookClaimers = 2
)

// Appended tells this process's workers that a command here appended to a
// payment's stream: when it wrote a webhook delivery (a status change of a
// payment with a webhookUrl), the payment's next delivery is sent at once
// if due; when it left the payment ready for its payout (deposited, not
// held for a document), the payment is converted and paid out at once. It
// never blocks.
func (w *Workers) Appended(ref domain.StreamRef, newDelivery, readyForPayout bool) {
	if newDelivery {
		w.offer("webhook", w.webhooksNow, ref)
	}
	if readyForPayout {
		w.offer("payout", w.advanceNow, ref)
	}
}

func (w *Workers) offer(step string, queue chan domain.StreamRef, ref domain.StreamRef) {
	select {
	case queue <- ref:
		w.metrics.fastPath.WithLabelValues(step, "queued").Inc()
	default:
		w.metrics.fastPath.WithLabelValues(step, "dropped").Inc()
	}
}

// runNow runs the steps Appended queued until ctx ends.
func (w *Workers) runNow(ctx context.Context) error {
	work := func(ref domain.StreamRef) {
		w.advancing.start(ref.ID)
		decided := func() { w.advancing.decided(ref.ID) }
		if err := w.convertAndPayOut(context.WithoutCancel(ctx), ref.TenantID, ref.ID, decided); err != nil {
			w.log.Debug("lifecycle: advance failed; the deposit's message will take the step", "payment", ref.ID, "err", err)
		}
	}
	done := make(chan struct{})
	drain := func(queue chan domain.StreamRef, step func(domain.StreamRef)) {
		defer func() { done <- struct{}{} }()
		for {
			select {
			case <-ctx.Done():
				return
			case ref := <-queue:
				step(ref)
			}
		}
	}
	for range advancers {
		go drain(w.advanceNow, work)
	}
	var sends sync.WaitGroup
	for range webhookClaimers {
		go func() {
			defer func() { done <- struct{}{} }()
			w.sendAnnounced(ctx, &sends)
		}()
	}
	for range advancers + webhookClaimers {
		<-done
	}
	sends.Wait()
	return nil
}

// sendAnnounced claims the next delivery of the payments Appended
// announced, all those waiting in one statement (up to a dispatcher's
// claim), and sends each claimed one, then the ones after it, on a
// goroutine of its own (deliverInOrder), until ctx ends. A claim per
// announcement cost each webhook a round trip and a transaction of its
// own; under load announcements come faster than claims, and each claim
// takes more of them.
func (w *Workers) sendAnnounced(ctx context.Context, sends *sync.WaitGroup) {
	batch := make([]uuid.UUID, 0, claimBatch)
	for {
		batch = batch[:0]
		select {
		case <-ctx.Done():
			return
		case ref := <-w.webhooksNow:
			batch = append(batch, ref.ID)
		}
	more:
		for len(batch) < claimBatch {
			select {
			case ref := <-w.webhooksNow:
				batch = append(batch, ref.ID)
			default:
				break more
			}
		}
		// Not cancelled by shutdown, as the dispatcher's claim is not: a
		// claim that committed must reach its deliveries.
		w.sendPaymentsWebhooks(context.WithoutCancel(ctx), batch, sends)
	}
}

// sendPaymentsWebhooks sends each payment's next delivery if it is due and
// nobody holds it, then the ones after it (deliverInOrder), each on a
// goroutine of its own. A payment whose webhooks a goroutine here sends
// already is left to that one (sendingPayments); one for which no send
// slot is free here (sendSlots), to the dispatcher.
func (w *Workers) sendPaymentsWebhooks(ctx context.Context, payments []uuid.UUID, sends *sync.WaitGroup) {
	slots := w.sendSlots.tryTake(len(payments))
	if missed := len(payments) - slots; missed > 0 {
		w.metrics.fastPath.WithLabelValues("webhook", "no_slot").Add(float64(missed))
	}
	entered := make([]uuid.UUID, 0, slots)
	for _, id := range payments[:slots] {
		if w.senders.enterUnlessBusy(id) {
			entered = append(entered, id)
		}
	}
	w.sendSlots.give(slots - len(entered))
	if len(entered) == 0 {
		return
	}
	claimed, err := w.claimPaymentsWebhooks(ctx, entered...)
	if err != nil {
		w.log.Debug("webhooks: claim payments' deliveries; the dispatcher will", "payments", len(entered), "err", err)
	}
	sending := make(map[uuid.UUID]bool, len(claimed))
	for _, d := range claimed {
		sending[d.PaymentID] = true
		sends.Add(1)
		go func() {
			defer sends.Done()
			defer w.sendSlots.give(1)
			w.deliverInOrder(ctx, d)
		}()
	}
	for _, id := range entered {
		if !sending[id] {
			w.senders.leave(id)
			w.sendSlots.give(1)
		}
	}
}
