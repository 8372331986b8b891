// Package benchkit is what ledgerbench and ledgerchaos both drive a ledger
// with: building and starting ledgerd processes, the databases they run on,
// the partners (tenants with a token and a merchant) that call them, and
// the webhook body their receivers read.
package benchkit
