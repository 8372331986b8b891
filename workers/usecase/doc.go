// Package usecase holds what the API's handlers, the dashboard, the
// JetStream workers and ledgerctl ask of the ledger: each use case reads
// what it needs, calls the rails, decides in domain and appends through
// the event store. It lives under workers because its use cases call the
// rails under workers/rails, and because a step that several callers take
// is then written once, for all.
package usecase
