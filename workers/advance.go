package workers

import (
	"context"

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
	// at once on Appended's word; webhookSenders how many payments' webhooks
	// it sends at once (more: a slow receiver holds one for its timeout).
	advancers      = 8
	webhookSenders = 16
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
	send := func(ref domain.StreamRef) { w.sendPaymentWebhooks(context.WithoutCancel(ctx), ref.ID) }
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
	for range webhookSenders {
		go drain(w.webhooksNow, send)
	}
	for range advancers + webhookSenders {
		<-done
	}
	return nil
}

// sendPaymentWebhooks sends the payment's next delivery if it is due and
// nobody holds it, then the ones after it (deliverInOrder). When a
// goroutine here sends the payment's webhooks already, it is left to that
// one (sendingPayments); when every send slot here is taken (sendSlots),
// to the dispatcher.
func (w *Workers) sendPaymentWebhooks(ctx context.Context, paymentID uuid.UUID) {
	if w.sendSlots.tryTake(1) == 0 { // every slot is taken: the dispatcher sends it later
		w.metrics.fastPath.WithLabelValues("webhook", "no_slot").Inc()
		return
	}
	defer w.sendSlots.give(1)
	if !w.senders.enterUnlessBusy(paymentID) {
		return
	}
	claimed, err := w.claimPaymentWebhook(ctx, paymentID)
	if err != nil {
		w.log.Debug("webhooks: claim a payment's delivery; the dispatcher will", "payment", paymentID, "err", err)
	}
	if len(claimed) == 0 {
		w.senders.leave(paymentID)
		return
	}
	w.deliverInOrder(ctx, claimed[0])
}
