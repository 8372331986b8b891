package main

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// auditReadModels are the read models a stream writes (projections/*.go), each
// read in the order of the id of the stream that writes its rows, beside
// the events: tenants and api_keys (tenant streams); users, momo_accounts
// and kyc_documents (user streams); merchants; payments, payment_documents,
// payment_deadlines, webhook_attempts and webhook_deliveries (payment
// streams; all but a delivery's lease, which the dispatchers hold);
// dashboard_users and dashboard_sessions (dashboard_user streams). The
// document store's bytes are not a read model and are not compared.
type auditReadModels struct {
	tenants     *auditTable[auditTenantRow]
	apiKeys     *auditTable[auditAPIKeyRow]
	users       *auditTable[auditUserRow]
	momo        *auditTable[auditMomoRow]
	kyc         *auditTable[auditKYCRow]
	merchants   *auditTable[auditMerchantRow]
	payments    *auditTable[auditPaymentRow]
	paymentDocs *auditTable[auditPaymentDocRow]
	deadlines   *auditTable[auditDeadlineRow]
	attempts    *auditTable[auditAttemptRow]
	deliveries  *auditTable[auditDeliveryRow]

	dashUsers    *auditTable[auditDashboardUserRow]
	dashSessions *auditTable[auditSessionRow]

	rests []func(context.Context) error
}

func openAuditReadModels(ctx context.Context, conn *pgx.Conn, found *auditFindings) (*auditReadModels, error) {
	rm := &auditReadModels{}
	o := &auditModelOpener{ctx: ctx, conn: conn, found: found, rm: rm}
	rm.tenants = openAuditModel(o, "tenants", `SELECT id, owner_user_id, name, version, created_at, updated_at
		FROM tenants ORDER BY id`, auditTenantRow.streamID, auditTenantRow.rowID, scanAuditTenantRow)
	rm.apiKeys = openAuditModel(o, "api_keys", `SELECT tenant_id, api_key, secret_hash, created_at, revoked_at
		FROM api_keys ORDER BY tenant_id, api_key`, auditAPIKeyRow.streamID, auditAPIKeyRow.rowID, scanAuditAPIKeyRow)
	rm.users = openAuditModel(o, "users", `SELECT id, tenant_id, record_id, email, name, role, status, is_verified, details,
		company_name, phone_number, default_momo_account_id, version, created_at, updated_at
		FROM users ORDER BY id`, auditUserRow.streamID, auditUserRow.rowID, scanAuditUserRow)
	rm.momo = openAuditModel(o, "momo_accounts", `SELECT user_id, id, tenant_id, label, phone_number, mobile_network,
		country_code, added_version FROM momo_accounts ORDER BY user_id, added_version, id`,
		auditMomoRow.streamID, auditMomoRow.rowID, scanAuditMomoRow)
	rm.kyc = openAuditModel(o, "kyc_documents", `SELECT user_id, id, tenant_id, document_type, file_name, content_type,
		size, sha256, created_at FROM kyc_documents ORDER BY user_id, id`, auditKYCRow.streamID, auditKYCRow.rowID, scanAuditKYCRow)
	rm.merchants = openAuditModel(o, "merchants", `SELECT id, tenant_id, name, country, currency, payout_method, bank_name,
		account_number, phone_number, lnurl, version, created_at, updated_at FROM merchants ORDER BY id`,
		auditMerchantRow.streamID, auditMerchantRow.rowID, scanAuditMerchantRow)
	rm.payments = openAuditModel(o, "payments", `SELECT id, tenant_id, user_id, merchant_id, status, state, version,
		created_at, updated_at FROM payments ORDER BY id`, auditPaymentRow.streamID, auditPaymentRow.rowID, scanAuditPaymentRow)
	rm.paymentDocs = openAuditModel(o, "payment_documents", `SELECT payment_id, id, tenant_id, file_name, content_type,
		size, sha256, created_at FROM payment_documents ORDER BY payment_id, id`,
		auditPaymentDocRow.streamID, auditPaymentDocRow.rowID, scanAuditPaymentDocRow)
	rm.deadlines = openAuditModel(o, "payment_deadlines", `SELECT payment_id, tenant_id, expires_at
		FROM payment_deadlines ORDER BY payment_id`, auditDeadlineRow.streamID, auditDeadlineRow.rowID, scanAuditDeadlineRow)
	rm.attempts = openAuditModel(o, "webhook_attempts", `SELECT payment_id, event_id, attempt, tenant_id, type, at,
		status_code, duration_ms, error FROM webhook_attempts ORDER BY payment_id, event_id, attempt`,
		auditAttemptRow.streamID, auditAttemptRow.rowID, scanAuditAttemptRow)
	rm.deliveries = openAuditModel(o, "webhook_deliveries", `SELECT payment_id, event_id, tenant_id, stream_version, type,
		occurred_at, payment, status, attempts, next_attempt_at FROM webhook_deliveries ORDER BY payment_id, event_id`,
		auditDeliveryRow.streamID, auditDeliveryRow.rowID, scanAuditDeliveryRow)
	rm.dashUsers = openAuditModel(o, "dashboard_users", `SELECT id, tenant_id, email, password_hash, setup_token_hash,
		setup_expires_at, version, created_at, updated_at FROM dashboard_users ORDER BY id`,
		auditDashboardUserRow.streamID, auditDashboardUserRow.rowID, scanAuditDashboardUserRow)
	rm.dashSessions = openAuditModel(o, "dashboard_sessions", `SELECT session_hash, user_id, tenant_id, created_at,
		expires_at, revoked_at FROM dashboard_sessions ORDER BY user_id, session_hash`,
		auditSessionRow.streamID, auditSessionRow.rowID, scanAuditSessionRow)
	return rm, o.err
}

// auditModelOpener opens the read models' cursors until one fails.
type auditModelOpener struct {
	ctx   context.Context
	conn  *pgx.Conn
	found *auditFindings
	rm    *auditReadModels
	err   error
}

func openAuditModel[T any](o *auditModelOpener, name, query string, key func(T) uuid.UUID, rowID func(T) string,
	scan pgx.RowToFunc[T]) *auditTable[T] {
	if o.err != nil {
		return nil
	}
	t, err := openAuditTable(o.ctx, o.conn, o.found, name, query, key, rowID, scan)
	if err != nil {
		o.err = err
		return nil
	}
	o.rm.rests = append(o.rm.rests, t.rest)
	return t
}

// rest reports the rows of every read model that no stream took.
func (rm *auditReadModels) rest(ctx context.Context) error {
	for _, f := range rm.rests {
		if err := f(ctx); err != nil {
			return err
		}
	}
	return nil
}

// The rows, with the id of the stream that writes each and a label.

type auditTenantRow struct {
	id, owner        uuid.UUID
	name             string
	version          int
	created, updated time.Time
}

func (r auditTenantRow) streamID() uuid.UUID { return r.id }
func (r auditTenantRow) rowID() string       { return r.id.String() }
func scanAuditTenantRow(row pgx.CollectableRow) (r auditTenantRow, err error) {
	err = row.Scan(&r.id, &r.owner, &r.name, &r.version, &r.created, &r.updated)
	return r, err
}

type auditAPIKeyRow struct {
	tenant          uuid.UUID
	key, secretHash string
	created         time.Time
	revoked         *time.Time
}

func (r auditAPIKeyRow) streamID() uuid.UUID { return r.tenant }
func (r auditAPIKeyRow) rowID() string       { return r.key }
func scanAuditAPIKeyRow(row pgx.CollectableRow) (r auditAPIKeyRow, err error) {
	err = row.Scan(&r.tenant, &r.key, &r.secretHash, &r.created, &r.revoked)
	return r, err
}

type auditUserRow struct {
	id, tenant, recordID      uuid.UUID
	email, name, role, status string
	verified                  bool
	details                   []byte
	company, phone            string
	defaultMomo               *uuid.UUID
	version                   int
	created, updated          time.Time
}

func (r auditUserRow) streamID() uuid.UUID { return r.id }
func (r auditUserRow) rowID() string       { return r.id.String() }
func scanAuditUserRow(row pgx.CollectableRow) (r auditUserRow, err error) {
	err = row.Scan(&r.id, &r.tenant, &r.recordID, &r.email, &r.name, &r.role, &r.status, &r.verified, &r.details,
		&r.company, &r.phone, &r.defaultMomo, &r.version, &r.created, &r.updated)
	return r, err
}

type auditMomoRow struct {
	user, id, tenant               uuid.UUID
	label, phone, network, country string
	addedVersion                   int
}

func (r auditMomoRow) streamID() uuid.UUID { return r.user }
func (r auditMomoRow) rowID() string       { return r.id.String() }
func scanAuditMomoRow(row pgx.CollectableRow) (r auditMomoRow, err error) {
	err = row.Scan(&r.user, &r.id, &r.tenant, &r.label, &r.phone, &r.network, &r.country, &r.addedVersion)
	return r, err
}

type auditKYCRow struct {
	user, id, tenant                       uuid.UUID
	docType, fileName, contentType, sha256 string
	size                                   int64
	created                                time.Time
}

func (r auditKYCRow) streamID() uuid.UUID { return r.user }
func (r auditKYCRow) rowID() string       { return r.id.String() }
func scanAuditKYCRow(row pgx.CollectableRow) (r auditKYCRow, err error) {
	err = row.Scan(&r.user, &r.id, &r.tenant, &r.docType, &r.fileName, &r.contentType, &r.size, &r.sha256, &r.created)
	return r, err
}

type auditMerchantRow struct {
	id, tenant                            uuid.UUID
	name, country, currency, payoutMethod string
	bankName, accountNumber, phone, lnurl string
	version                               int
	created, updated                      time.Time
}

func (r auditMerchantRow) streamID() uuid.UUID { return r.id }
func (r auditMerchantRow) rowID() string       { return r.id.String() }
func scanAuditMerchantRow(row pgx.CollectableRow) (r auditMerchantRow, err error) {
	err = row.Scan(&r.id, &r.tenant, &r.name, &r.country, &r.currency, &r.payoutMethod, &r.bankName, &r.accountNumber,
		&r.phone, &r.lnurl, &r.version, &r.created, &r.updated)
	return r, err
}

type auditPaymentRow struct {
	id, tenant, user, merchant uuid.UUID
	status                     string
	state                      []byte
	version                    int
	created, updated           time.Time
}

func (r auditPaymentRow) streamID() uuid.UUID { return r.id }
func (r auditPaymentRow) rowID() string       { return r.id.String() }
func scanAuditPaymentRow(row pgx.CollectableRow) (r auditPaymentRow, err error) {
	err = row.Scan(&r.id, &r.tenant, &r.user, &r.merchant, &r.status, &r.state, &r.version, &r.created, &r.updated)
	return r, err
}

type auditPaymentDocRow struct {
	payment, id, tenant           uuid.UUID
	fileName, contentType, sha256 string
	size                          int64
	created                       time.Time
}

func (r auditPaymentDocRow) streamID() uuid.UUID { return r.payment }
func (r auditPaymentDocRow) rowID() string       { return r.id.String() }
func scanAuditPaymentDocRow(row pgx.CollectableRow) (r auditPaymentDocRow, err error) {
	err = row.Scan(&r.payment, &r.id, &r.tenant, &r.fileName, &r.contentType, &r.size, &r.sha256, &r.created)
	return r, err
}

type auditDeadlineRow struct {
	payment, tenant uuid.UUID
	expires         time.Time
}

func (r auditDeadlineRow) streamID() uuid.UUID { return r.payment }
func (r auditDeadlineRow) rowID() string       { return r.payment.String() }
func scanAuditDeadlineRow(row pgx.CollectableRow) (r auditDeadlineRow, err error) {
	err = row.Scan(&r.payment, &r.tenant, &r.expires)
	return r, err
}

type auditAttemptRow struct {
	payment, event uuid.UUID
	attempt        int
	tenant         uuid.UUID
	typ            string
	at             time.Time
	status         *int
	duration       int64
	err            *string
}

func (r auditAttemptRow) streamID() uuid.UUID { return r.payment }
func (r auditAttemptRow) rowID() string       { return fmt.Sprintf("%s/%d", r.event, r.attempt) }
func scanAuditAttemptRow(row pgx.CollectableRow) (r auditAttemptRow, err error) {
	err = row.Scan(&r.payment, &r.event, &r.attempt, &r.tenant, &r.typ, &r.at, &r.status, &r.duration, &r.err)
	return r, err
}
