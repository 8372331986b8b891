package projections

import (
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
)

// Table is a read model's table: its columns, the first Key of which are
// its primary key.
type Table struct {
	Name    string
	Columns []string
	Key     int

	put     string   // the statement of Put
	updates sync.Map // the statements of Update, by their columns
}

// The read models a stream's events write (migrations/): each row is
// written from the state of its stream as the domain folds it, or from the
// event that adds it.
var (
	tenantsTable = newTable("tenants", 1, "id", "name", "owner_user_id", "version", "created_at", "updated_at")
	apiKeysTable = newTable("api_keys", 1, "api_key", "tenant_id", "secret_hash", "created_at", "revoked_at")
	usersTable   = newTable("users", 1, "id", "tenant_id", "record_id", "email", "name", "role", "status", "is_verified", "details",
		"company_name", "phone_number", "default_momo_account_id", "version", "created_at", "updated_at")
	momoAccountsTable = newTable("momo_accounts", 1, "id", "tenant_id", "user_id", "label", "phone_number", "mobile_network", "country_code", "added_version")
	kycDocumentsTable = newTable("kyc_documents", 1, "id", "tenant_id", "user_id", "document_type", "file_name", "content_type", "size", "sha256", "created_at")
	merchantsTable    = newTable("merchants", 1, "id", "tenant_id", "name", "country", "currency", "payout_method", "bank_name", "account_number",
		"phone_number", "lnurl", "version", "created_at", "updated_at")
	paymentsTable          = newTable("payments", 1, "id", "tenant_id", "user_id", "merchant_id", "status", "state", "version", "created_at", "updated_at")
	paymentDocumentsTable  = newTable("payment_documents", 1, "id", "tenant_id", "payment_id", "file_name", "content_type", "size", "sha256", "created_at")
	paymentDeadlinesTable  = newTable("payment_deadlines", 1, "payment_id", "tenant_id", "expires_at")
	webhookDeliveriesTable = newTable("webhook_deliveries", 1, "event_id", "tenant_id", "payment_id", "stream_version", "type", "occurred_at", "payment", "next_attempt_at")
	ledgerEntriesTable     = newTable("ledger_entries", 1, "event_id", "tenant_id", "recorded_at", "accounts", "currencies", "sides", "amounts")
	dashboardUsersTable    = newTable("dashboard_users", 1, "id", "tenant_id", "email", "password_hash", "setup_token_hash", "setup_expires_at", "version",
		"created_at", "updated_at")
	dashboardSessionsTable = newTable("dashboard_sessions", 1, "session_hash", "user_id", "tenant_id", "created_at", "expires_at", "revoked_at")
	depositReferencesTable = newTable("deposit_references", 1, "payment_id", "tenant_id", "reference")
	bankCreditsTable       = newTable("bank_credits", 1, "event_id", "tenant_id", "account", "entry_ref", "recorded_at")
	unmatchedFundsTable    = newTable("unmatched_funds", 1, "id", "tenant_id", "status", "state", "version", "created_at", "updated_at")
	breaksTable            = newTable("reconciliation_breaks", 1, "id", "rail", "kind", "status", "state", "version", "created_at", "updated_at")
)

func newTable(name string, key int, columns ...string) *Table {
	set := make([]string, 0, len(columns)-key)
	for _, c := range columns[key:] {
		set = append(set, c+" = EXCLUDED."+c)
	}
	return &Table{Name: name, Columns: columns, Key: key,
		put: `INSERT INTO ` + name + ` (` + strings.Join(columns, ", ") + `) VALUES (` + params(1, len(columns)) +
			`) ON CONFLICT (` + strings.Join(columns[:key], ", ") + `) DO UPDATE SET ` + strings.Join(set, ", ")}
}

// Tables lists every table the projection writes.
var Tables = []*Table{tenantsTable, apiKeysTable, usersTable, momoAccountsTable, kycDocumentsTable, merchantsTable,
	paymentsTable, paymentDocumentsTable, paymentDeadlinesTable, webhookDeliveriesTable, ledgerEntriesTable,
	dashboardUsersTable, dashboardSessionsTable, depositReferencesTable, bankCreditsTable, unmatchedFundsTable, breaksTable}

// Rows receives what events do to the read models. The append writes them
// as statements in its own transaction (sqlRows); the rebuild holds a
// stream's rows and copies them once the stream ends; nothing else decides
// what a row holds.
type Rows interface {
	// Put writes row, all of t's columns in order: a new row, or the
	// replacement of the row with its key.
	Put(t *Table, row ...any)
	// Update sets columns (names of t's, not of its key) of the row with key
	// to values.
	Update(t *Table, key []any, columns []string, values ...any)
	// Delete removes the row with key, if there is one.
	Delete(t *Table, key ...any)
	// Keeps says whether t's rows are written at all: a value costly to
	// make is not made for a table a writer leaves out.
	Keeps(t *Table) bool
}

// sqlRows queues each write as a statement of an append's pipeline. No
// statement reads another's result, so they can all go in one round trip.
type sqlRows struct{ b *pgx.Batch }

func (w sqlRows) Put(t *Table, row ...any) { w.b.Queue(t.put, row...) }

func (w sqlRows) Update(t *Table, key []any, columns []string, values ...any) {
	names := strings.Join(columns, ",")
	sql, ok := t.updates.Load(names)
	if !ok {
		set := make([]string, len(columns))
		for i, c := range columns {
			set[i] = c + " = $" + strconv.Itoa(i+1)
		}
		sql, _ = t.updates.LoadOrStore(names, `UPDATE `+t.Name+` SET `+strings.Join(set, ", ")+` WHERE `+keyMatch(t, len(columns)+1))
	}
	w.b.Queue(sql.(string), append(values, key...)...)
}

func (w sqlRows) Delete(t *Table, key ...any) {
	w.b.Queue(`DELETE FROM `+t.Name+` WHERE `+keyMatch(t, 1), key...)
}

func (sqlRows) Keeps(*Table) bool { return true }

// keyMatch is the condition on t's key, its parameters numbered from first.
func keyMatch(t *Table, first int) string {
	var m strings.Builder
	for i, c := range t.Columns[:t.Key] {
		if i > 0 {
			m.WriteString(" AND ")
		}
		m.WriteString(c + " = $" + strconv.Itoa(first+i))
	}
	return m.String()
}

func params(first, n int) string {
	ps := make([]string, n)
	for i := range ps {
		ps[i] = "$" + strconv.Itoa(first+i)
	}
	return strings.Join(ps, ", ")
}

// StatementRows is Rows queueing each write as a statement on b, as the
// append does.
func StatementRows(b *pgx.Batch) Rows { return sqlRows{b} }
