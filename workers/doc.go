// Package workers holds the JetStream durable consumers that react to ledger
// events (deposits, conversion, payout, expiry, webhook delivery). Each worker
// is idempotent: redelivery, crashes and several ledgerd processes at once
// never repeat an effect. The payment lifecycle issue fills this package.
package workers
