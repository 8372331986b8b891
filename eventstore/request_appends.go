package eventstore

import (
	"context"
	"sync"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// requestAppends holds the appends of one request that carries an
// Idempotency-Key until the request has its answer: they are then
// committed with the key's record, in one transaction, through the group
// commit (Idempotency.Do), so the effect and the record commit together or
// not at all, and a keyed write shares its commit with the plain ones.
//
// Until that commit nothing the request appended is visible: not to its own
// later reads, and not to anyone else. A command that ran on a stream the
// request already appended to would decide on the state before it, and be
// refused at the commit as a version conflict; no request does that.
type requestAppends struct {
	mu          sync.Mutex
	inserts     []*pgx.QueuedQuery // the events' inserts, in the order appended
	projections []*pgx.QueuedQuery // the read models' statements, in the order appended
	stream      uuid.UUID          // the first stream appended to: the group commit's lock order
	after       []func()           // AfterCommit's functions, run once committed
}

type requestAppendsKey struct{}

func withRequestAppends(ctx context.Context, r *requestAppends) context.Context {
	return context.WithValue(ctx, requestAppendsKey{}, r)
}

func requestAppendsOf(ctx context.Context) *requestAppends {
	r, _ := ctx.Value(requestAppendsKey{}).(*requestAppends)
	return r
}

// hold keeps an append's pipeline b, whose first appends statements insert
// events, for the request's commit. Every insert goes before every
// read-model statement: a projection reads nothing another append's insert
// writes, and its own insert still comes before it.
func (r *requestAppends) hold(b *pgx.Batch, appends int, stream uuid.UUID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.inserts) == 0 {
		r.stream = stream
	}
	r.inserts = append(r.inserts, b.QueuedQueries[:appends]...)
	r.projections = append(r.projections, b.QueuedQueries[appends:]...)
}

// pending is the request's commit: its appends, then record.
func (r *requestAppends) pending(ctx context.Context, record *pgx.QueuedQuery) *pendingAppend {
	r.mu.Lock()
	defer r.mu.Unlock()
	queries := make([]*pgx.QueuedQuery, 0, len(r.inserts)+len(r.projections)+1)
	queries = append(append(append(queries, r.inserts...), r.projections...), record)
	return newPendingAppend(ctx, queries, len(r.inserts), r.stream)
}

func (r *requestAppends) committed() {
	r.mu.Lock()
	after := r.after
	r.mu.Unlock()
	for _, f := range after {
		f()
	}
}

// AfterCommit runs f once what ctx's request has appended is committed:
// at once for a request without an Idempotency-Key (its appends commit as
// they are made), after its key's record commits for one with a key, and
// never if that request's appends are dropped. Workers told of an append
// (a fast path to the next step) must not look before it is visible.
func AfterCommit(ctx context.Context, f func()) {
	r := requestAppendsOf(ctx)
	if r == nil {
		f()
		return
	}
	r.mu.Lock()
	r.after = append(r.after, f)
	r.mu.Unlock()
}
