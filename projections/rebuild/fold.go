package rebuild

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ledger/ledger/domain"
)

// The fold: the bulk round's fast path.
//
// Replaying the projector's statements one by one costs Postgres a
// statement's work several times an event (a payment's state is
// rewritten, TOAST and all, by each of its events; figures: docs/performance.md, Replay).
// The fold instead reads the events in
// stream order, keeps one stream's rows in memory, applies each event to
// them exactly as the projector's statements would (the same domain
// functions decide: Decode, WritePaymentChanges, StatusOf, PostingsOf), and
// COPYs each row once, when its stream ends. Every projection statement
// touches only rows of its own event's stream (the domain guarantees the
// references: a momo account, an API key, a delivery belong to the stream
// naming them), so stream order gives the same rows as position order.
//
// Whatever the fold cannot reproduce exactly (a reference to a row its
// stream did not create, a state of a shape the statements would fail on)
// sends the whole stream to the projector instead, after the COPYs. The
// catch-up rounds and the locked tail always use the projector.
// TestRebuildReproducesEveryGroup checks both paths against the inline
// projection, over a fixture that must hold every registered event type,
// so the fold cannot drift from the projections' statements unnoticed: a change to a
// projection statement must be mirrored here. A table the fold does not
// know at all (a new read model) makes the bulk round use the projector.

// foldColumns are the columns the fold writes, per table; the others take
// their defaults, as they do in the projector's INSERTs.
var foldColumns = map[string][]string{
	"tenants":            {"id", "name", "owner_user_id", "version", "created_at", "updated_at"},
	"api_keys":           {"api_key", "tenant_id", "secret_hash", "created_at", "revoked_at"},
	"users":              {"id", "tenant_id", "record_id", "email", "name", "role", "status", "version", "created_at", "updated_at", "is_verified", "details", "company_name", "phone_number", "default_momo_account_id"},
	"momo_accounts":      {"id", "tenant_id", "user_id", "label", "phone_number", "mobile_network", "country_code", "added_version"},
	"kyc_documents":      {"id", "tenant_id", "user_id", "document_type", "file_name", "content_type", "size", "sha256", "created_at"},
	"merchants":          {"id", "tenant_id", "name", "country", "currency", "payout_method", "bank_name", "account_number", "phone_number", "lnurl", "version", "created_at", "updated_at"},
	"payments":           {"id", "tenant_id", "user_id", "merchant_id", "status", "state", "version", "created_at", "updated_at"},
	"payment_documents":  {"id", "tenant_id", "payment_id", "file_name", "content_type", "size", "sha256", "created_at"},
	"payment_deadlines":  {"payment_id", "tenant_id", "expires_at"},
	"webhook_deliveries": {"event_id", "tenant_id", "payment_id", "stream_version", "type", "occurred_at", "payment", "status", "attempts", "next_attempt_at"},
	"webhook_attempts":   {"event_id", "attempt", "tenant_id", "payment_id", "type", "at", "status_code", "duration_ms", "error"},
	"ledger_entries":     {"event_id", "tenant_id", "recorded_at", "accounts", "currencies", "sides", "amounts"},
	"dashboard_users":    {"id", "tenant_id", "email", "password_hash", "setup_token_hash", "setup_expires_at", "version", "created_at", "updated_at"},
	"dashboard_sessions": {"session_hash", "user_id", "tenant_id", "created_at", "expires_at", "revoked_at"},
}

// streamTypes are the stream types whose events write a group's tables
// (Projector.Project dispatches on the stream type); nil: any stream, for
// postings, which any event may carry.
var streamTypes = map[string][]string{
	"tenants": {"tenant"}, "users": {"user"}, "merchants": {"merchant"}, "payments": {"payment"}, "postings": nil,
	"dashboard": {"dashboard_user"},
}

// errUnfoldable makes the fold hand a stream to the projector.
var errUnfoldable = errors.New("stream the fold cannot reproduce")

// Rows of one stream, held until the stream ends.
type (
	tenantRow struct {
		id, owner        uuid.UUID
		name             string
		version          int
		created, updated time.Time
	}
	apiKeyRow struct {
		key, hash string
		tenant    uuid.UUID
		created   time.Time
		revoked   *time.Time
	}
	userRow struct {
		id, tenant, record        uuid.UUID
		email, name, role, status string
		version                   int
		created, updated          time.Time
		verified                  bool
		details                   jsonObject
		company, phone            string
		defaultMomo               *uuid.UUID
	}
	momoRow struct {
		id, tenant, user               uuid.UUID
		label, phone, network, country string
		added                          int
	}
	merchantRow struct {
		e                domain.MerchantCreated
		tenant           uuid.UUID
		version          int
		created, updated time.Time
	}
	paymentRow struct {
		id, tenant, user, merchant uuid.UUID
		status                     string
		state                      jsonObject
		version                    int
		created, updated           time.Time
	}
	deliveryRow struct {
		event    uuid.UUID
		version  int
		typ      string
		occurred time.Time
		payment  []byte // JSON text; nil until copyStateToDeliveries
		status   string
		attempts int
		next     time.Time
		// delivered: a 2xx deleted the row (projectWebhookAttempt); kept
		// here only so later attempts at it change nothing, as in SQL.
		delivered bool
	}
)

// streamFold is the fold of the stream being read.
type streamFold struct {
	id           uuid.UUID
	recs         []*domain.Record // the stream's records, kept only until it proves foldable or not
	bad          bool             // handed to the projector
	tenant       *tenantRow
	keys         []*apiKeyRow
	user         *userRow
	momo         []*momoRow
	merchant     *merchantRow
	payment      *paymentRow
	deadline     *time.Time
	deliveries   []*deliveryRow
	attempts     map[attemptKey]bool // webhook attempts seen; ON CONFLICT DO NOTHING
	dashUser     *dashboardUserRow
	dashSessions []*dashboardSessionRow
	rows         map[string][][]any // insert-only rows, written when the stream ends (nothing if it is handed over)
	entries      []entryRow         // the ledger_entries rows, likewise
	attemptRows  []attemptRow       // the webhook_attempts rows, likewise
	values       *jsonArena         // the folder's, for the JSON its events write into the payment's state
	changes      stateChanges       // writes an event's changes into the payment's state
}

// folder folds the streams one bulk worker is given.
type folder struct {
	r        *rebuilder
	cur      *streamFold
	out      map[string][][]any // rows ready for COPY, per table
	entries  typedChunk[entryRow]
	attempts typedChunk[attemptRow]
	// The last stream's typed rows, emptied, for the next stream's.
	spentEntries  []entryRow
	spentAttempts []attemptRow
	values        jsonArena
	copies        chan<- copyJob
	handed        [][]domain.Record // streams for the projector
}

func newFolder(r *rebuilder, copies chan<- copyJob) *folder {
	return &folder{r: r, out: map[string][][]any{}, copies: copies,
		entries:  typedChunk[entryRow]{table: "ledger_entries", source: entrySource},
		attempts: typedChunk[attemptRow]{table: "webhook_attempts", source: attemptSource}}
}

// copyJob is a chunk of rows for one table.
type copyJob struct {
	table string
	rows  pgx.CopyFromSource
	n     int // rows
}

// Rows per COPY statement. Postgres gives each COPY statement an insert
// buffer of up to 1000 rows or 64 kB, and creates the buffer's tuple slots
// anew for every statement, each slot registered with its resource owner
// at a cost that grows with the slots already registered (they all pin the
// same tuple descriptor, which Postgres 15 files under one hash bucket),
// which short statements pay mostly for narrow rows (a buffer holds few
// rows carrying a payment's state). Narrow rows go in long statements;
// rows holding a JSON document keep short ones: long chunks of them made
// the Go collector run far more often under the rebuild's memory limit.
// Figures: docs/performance.md, Replay.
const (
	copyChunk       = 2000
	copyChunkNarrow = 16000
)

// documentTables are the tables whose rows hold a JSON document.
var documentTables = map[string]bool{"users": true, "payments": true, "webhook_deliveries": true}

// chunkRows is the rows per COPY of table.
func chunkRows(table string) int {
	if documentTables[table] {
		return copyChunk
	}
	return copyChunkNarrow
}

// add folds one record; records come in stream order.
func (f *folder) add(ctx context.Context, rec *domain.Record) error {
	if f.cur == nil || f.cur.id != rec.StreamID {
		if err := f.endStream(ctx); err != nil {
			return err
		}
		f.cur = &streamFold{id: rec.StreamID, rows: map[string][][]any{}, recs: make([]*domain.Record, 0, 8), entries: f.spentEntries,
			attemptRows: f.spentAttempts, values: &f.values}
	}
	s := f.cur
	s.recs = append(s.recs, rec)
	f.r.events.Add(1)
	if s.bad {
		return nil
	}
	if err := f.apply(s, rec); errors.Is(err, errUnfoldable) {
		s.bad = true
	} else if err != nil {
		return err
	}
	return nil
}

// endStream writes the rows of the stream just folded, or hands it over.
func (f *folder) endStream(ctx context.Context) error {
	s := f.cur
	if s == nil {
		return nil
	}
	f.cur = nil
	if s.bad {
		recs := make([]domain.Record, len(s.recs))
		for i, rec := range s.recs {
			recs[i] = *rec
		}
		f.handed = append(f.handed, recs)
		return nil
	}
	emit := func(table string, row ...any) {
		if f.r.keep[table] {
			f.out[table] = append(f.out[table], row)
		}
	}
	if t := s.tenant; t != nil {
		emit("tenants", t.id, t.name, t.owner, t.version, t.created, t.updated)
	}
	for _, k := range s.keys {
		emit("api_keys", k.key, k.tenant, k.hash, k.created, k.revoked)
	}
	if u := s.user; u != nil {
		emit("users", u.id, u.tenant, u.record, u.email, u.name, u.role, u.status, u.version, u.created, u.updated,
			u.verified, u.details.text(), u.company, u.phone, u.defaultMomo)
	}
	for _, m := range s.momo {
		emit("momo_accounts", m.id, m.tenant, m.user, m.label, m.phone, m.network, m.country, m.added)
	}
	if m := s.merchant; m != nil {
		e := m.e
		emit("merchants", e.MerchantID, m.tenant, e.Name, e.Country, e.Currency, e.PayoutMethod, e.BankName,
			e.AccountNumber, e.PhoneNumber, e.LNURL, m.version, m.created, m.updated)
	}
	if p := s.payment; p != nil {
		emit("payments", p.id, p.tenant, p.user, p.merchant, p.status, p.state.text(), p.version, p.created, p.updated)
		if s.deadline != nil {
			emit("payment_deadlines", p.id, p.tenant, *s.deadline)
		}
		s.copyStateToDeliveries()
		for _, d := range s.deliveries {
			if d.delivered {
				continue
			}
			emit("webhook_deliveries", d.event, p.tenant, p.id, d.version, d.typ, d.occurred, d.payment, d.status, d.attempts, d.next)
		}
	}
	s.emitDashboardUser(emit)
	for table, rows := range s.rows {
		if f.r.keep[table] {
			f.out[table] = append(f.out[table], rows...)
		}
	}
	if f.r.keep["ledger_entries"] && f.entries.add(s.entries) {
		if err := f.queue(ctx, f.entries.take()); err != nil {
			return err
		}
	}
	if f.r.keep["webhook_attempts"] && f.attempts.add(s.attemptRows) {
		if err := f.queue(ctx, f.attempts.take()); err != nil {
			return err
		}
	}
	f.spentEntries, f.spentAttempts = s.entries[:0], s.attemptRows[:0]
	for table, rows := range f.out {
		if len(rows) >= chunkRows(table) {
			if err := f.send(ctx, table); err != nil {
				return err
			}
		}
	}
	return nil
}

func (f *folder) send(ctx context.Context, table string) error {
	rows := f.out[table]
	if err := f.queue(ctx, copyJob{table: table, rows: pgx.CopyFromRows(rows), n: len(rows)}); err != nil {
		return err
	}
	f.out[table] = nil
	return nil
}

func (f *folder) queue(ctx context.Context, job copyJob) error {
	select {
	case f.copies <- job:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// finish ends the last stream and sends every row left.
func (f *folder) finish(ctx context.Context) error {
	if err := f.endStream(ctx); err != nil {
		return err
	}
	for table, rows := range f.out {
		if len(rows) > 0 {
			if err := f.send(ctx, table); err != nil {
				return err
			}
		}
	}
	for _, job := range []copyJob{f.entries.take(), f.attempts.take()} {
		if job.n > 0 {
			if err := f.queue(ctx, job); err != nil {
				return err
			}
		}
	}
	return nil
}

// insert queues an insert-only row of the stream.
func (s *streamFold) insert(table string, row ...any) {
	s.rows[table] = append(s.rows[table], row)
}

// apply is Project for one record, on the stream's rows in memory. Each
// case mirrors the statements of projector.go's file for the stream type.
func (f *folder) apply(s *streamFold, r *domain.Record) error {
	if r.StreamType == "payment" && r.Type == createdType && r.SchemaVersion == createdVersion {
		if err := s.paymentCreated(r); !errors.Is(err, errSlowPath) {
			return err
		}
	}
	e, err := r.Decode()
	if err != nil {
		return fmt.Errorf("rebuild: project %s %s: %w", r.Type, r.ID, err)
	}
	switch r.StreamType {
	case "tenant":
		err = s.applyTenant(r, e)
	case "user":
		err = s.applyUser(r, e)
	case "merchant":
		err = s.applyMerchant(r, e)
	case "payment":
		err = s.applyPayment(r, e)
	case "dashboard_user":
		err = s.applyDashboardUser(r, e)
	}
	if err != nil {
		return err
	}
	postings := domain.PostingsOf(e) // postings.go
	if len(postings) == 0 {
		return nil
	}
	s.entries = append(s.entries, entryRow{event: r.ID, tenant: r.TenantID, at: r.RecordedAt, postings: postings})
	return nil
}
