package workers

// sendSlots bounds the webhook attempts one process has in flight, the
// dispatcher's and the fast path's together. Each attempt holds a
// goroutine and a connection to the receiver for up to its timeout (10 s):
// unbounded, receivers that hang would let the dispatcher claim a hundred
// more every poll, until the process ran out of file descriptors (1,024 by
// default) and with them its connections to Postgres and NATS. A delivery
// that finds no slot stays pending, for the dispatcher to claim when one
// is free.
type sendSlots chan struct{}

// defaultWebhookSends is the bound when Config.WebhookSends is not set:
// with every receiver hanging it still makes some 25 attempts a second.
const defaultWebhookSends = 256

// tryTake takes up to n free slots without waiting and returns how many it took.
func (s sendSlots) tryTake(n int) int {
	for i := range n {
		select {
		case s <- struct{}{}:
		default:
			return i
		}
	}
	return n
}

// give returns n slots.
func (s sendSlots) give(n int) {
	for range n {
		<-s
	}
}
