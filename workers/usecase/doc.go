// Package usecase holds what both the API's handlers and the JetStream
// workers ask of the ledger: each use case reads what it needs, calls the
// rails, decides in domain and appends through the event store. It lives
// under workers because its use cases call the rails under workers/rails,
// and because a step that handlers and workers both take is then written
// once, for both.
package usecase
