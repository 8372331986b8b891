package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/ledger/ledger/domain"
)

// The folds of each stream type: the domain's Apply function, plus the
// facts of the records that the projection writes beside the state
// (recorded_at of the event that added a row, its stream version), and
// check, which compares them with the rows the projection wrote.

// auditRowOf returns the one row of a stream in a read model, or reports it missing.
func auditRowOf[T any](rc *auditReplayCheck, s *auditStream, name string, rows []T) (T, auditFields, bool) {
	c := auditFields{f: &rc.replay, subject: name + " " + s.ref.ID.String()}
	if len(rows) == 0 {
		var zero T
		c.note("missing: %s has %d events", s.subject, s.count)
		return zero, c, false
	}
	rc.rows++
	return rows[0], c, true
}

// auditStreamColumns compares the columns every stream's row carries: the
// stream's last version and the times of its first and last events.
func auditStreamColumns(c auditFields, s *auditStream, version int, created, updated time.Time) {
	c.eq("version", s.version, version)
	c.eq("created_at", s.created, created)
	c.eq("updated_at", s.updated, updated)
}

// auditTenantFold is a tenant stream: tenants and api_keys.
type auditTenantFold struct {
	t    domain.Tenant
	keys map[string]*auditAPIKeyFacts
}

type auditAPIKeyFacts struct {
	secretHash string
	created    time.Time
	revoked    *time.Time // the last revocation's recorded_at
}

func (f *auditTenantFold) apply(r domain.Record, e domain.Event) {
	f.t = domain.ApplyTenant(f.t, e)
	if f.keys == nil {
		f.keys = map[string]*auditAPIKeyFacts{}
	}
	switch e := e.(type) {
	case domain.APIKeyCreated:
		f.keys[e.APIKey] = &auditAPIKeyFacts{secretHash: e.SecretHash, created: r.RecordedAt}
	case domain.APIKeyRevoked:
		if k := f.keys[e.APIKey]; k != nil {
			at := r.RecordedAt
			k.revoked = &at
		}
	}
}

func (f *auditTenantFold) check(ctx context.Context, rc *auditReplayCheck, s *auditStream) error {
	rows, err := rc.models.tenants.take(ctx, s.ref.ID)
	if err != nil {
		return err
	}
	keys, err := rc.models.apiKeys.take(ctx, s.ref.ID)
	if err != nil {
		return err
	}
	if row, c, ok := auditRowOf(rc, s, "tenants", rows); ok {
		if f.t.ID != s.ref.ID {
			c.eq("id (tenant.created's tenantId)", s.ref.ID, f.t.ID)
		}
		c.eq("name", f.t.Name, row.name)
		c.eq("owner_user_id", f.t.OwnerUserID, row.owner)
		auditStreamColumns(c, s, row.version, row.created, row.updated)
	}
	actual := map[string]auditAPIKeyRow{}
	for _, k := range keys {
		actual[k.key] = k
	}
	for _, key := range slices.Sorted(maps.Keys(f.t.APIKeys)) {
		c := auditFields{f: &rc.replay, subject: "api_keys " + key}
		row, ok := actual[key]
		if !ok {
			c.note("missing: created by %s", s.subject)
			continue
		}
		delete(actual, key)
		rc.rows++
		facts := f.keys[key]
		var revoked *time.Time
		if !f.t.APIKeys[key] && facts != nil {
			revoked = facts.revoked
		}
		c.eq("tenant_id", s.ref.TenantID, row.tenant)
		if facts != nil {
			c.eq("secret_hash", facts.secretHash, row.secretHash)
			c.eq("created_at", facts.created, row.created)
		}
		c.eq("revoked_at", revoked, row.revoked)
	}
	for _, key := range slices.Sorted(maps.Keys(actual)) {
		rc.models.apiKeys.extra(actual[key])
	}
	return nil
}

// auditUserFold is a user stream: users, momo_accounts, kyc_documents.
type auditUserFold struct {
	u        domain.User
	added    map[uuid.UUID]int       // momo account -> the stream version that added it
	uploaded map[uuid.UUID]time.Time // KYC document -> recorded_at of its upload
}

func (f *auditUserFold) apply(r domain.Record, e domain.Event) {
	f.u = domain.ApplyUser(f.u, e)
	switch e := e.(type) {
	case domain.MomoAccountAdded:
		if f.added == nil {
			f.added = map[uuid.UUID]int{}
		}
		f.added[e.AccountID] = r.StreamVersion
	case domain.KYCDocumentUploaded:
		if f.uploaded == nil {
			f.uploaded = map[uuid.UUID]time.Time{}
		}
		f.uploaded[e.DocumentID] = r.RecordedAt
	}
}

func (f *auditUserFold) check(ctx context.Context, rc *auditReplayCheck, s *auditStream) error {
	rows, err := rc.models.users.take(ctx, s.ref.ID)
	if err != nil {
		return err
	}
	momo, err := rc.models.momo.take(ctx, s.ref.ID)
	if err != nil {
		return err
	}
	kyc, err := rc.models.kyc.take(ctx, s.ref.ID)
	if err != nil {
		return err
	}
	u := f.u
	if row, c, ok := auditRowOf(rc, s, "users", rows); ok {
		if u.ID != s.ref.ID {
			c.eq("id (user.created's userId)", s.ref.ID, u.ID)
		}
		c.eq("record_id", s.firstID, row.recordID)
		c.eq("email", u.Email, row.email)
		c.eq("name", u.Name, row.name)
		c.eq("role", u.Role, row.role)
		c.eq("status", u.Status, row.status)
		c.eq("is_verified", u.IsVerified, row.verified)
		// details is read back as the API reads it (into UserDetails): the
		// projection writes the whole set on user.updated and merges the
		// profile's sector, firstName and address into it.
		var details domain.UserDetails
		if err := json.Unmarshal(row.details, &details); err != nil {
			c.note("details: not the JSON of UserDetails: %v", err)
		} else {
			c.sameAsJSON("details", u.UserDetails, details)
		}
		c.eq("company_name", u.CompanyName, row.company)
		c.eq("phone_number", u.PhoneNumber, row.phone)
		c.eq("default_momo_account_id", u.DefaultMomoAccountID, row.defaultMomo)
		c.eq("tenant_id", s.ref.TenantID, row.tenant)
		auditStreamColumns(c, s, row.version, row.created, row.updated)
	}
	accounts := map[uuid.UUID]auditMomoRow{}
	for _, m := range momo {
		accounts[m.id] = m
	}
	for _, a := range u.MomoAccounts {
		c := auditFields{f: &rc.replay, subject: "momo_accounts " + a.ID.String()}
		row, ok := accounts[a.ID]
		if !ok {
			c.note("missing: added by %s", s.subject)
			continue
		}
		delete(accounts, a.ID)
		rc.rows++
		c.eq("tenant_id", s.ref.TenantID, row.tenant)
		c.eq("label", a.Label, row.label)
		c.eq("phone_number", a.PhoneNumber, row.phone)
		c.eq("mobile_network", a.MobileNetwork, row.network)
		c.eq("country_code", a.CountryCode, row.country)
		c.eq("added_version", f.added[a.ID], row.addedVersion)
	}
	for _, m := range momo {
		if _, left := accounts[m.id]; left {
			rc.models.momo.extra(m)
		}
	}
	docs := map[uuid.UUID]auditKYCRow{}
	for _, d := range kyc {
		docs[d.id] = d
	}
	for _, d := range u.KYCDocuments {
		c := auditFields{f: &rc.replay, subject: "kyc_documents " + d.ID.String()}
		row, ok := docs[d.ID]
		if !ok {
			c.note("missing: uploaded in %s", s.subject)
			continue
		}
		delete(docs, d.ID)
		rc.rows++
		c.eq("tenant_id", s.ref.TenantID, row.tenant)
		c.eq("document_type", d.DocumentType, row.docType)
		c.eq("file_name", d.FileName, row.fileName)
		c.eq("content_type", d.ContentType, row.contentType)
		c.eq("size", d.Size, row.size)
		c.eq("sha256", d.SHA256, row.sha256)
		c.eq("created_at", f.uploaded[d.ID], row.created)
	}
	for _, d := range kyc {
		if _, left := docs[d.id]; left {
			rc.models.kyc.extra(d)
		}
	}
	return nil
}

// auditMerchantFold is a merchant stream: merchants.
type auditMerchantFold struct{ m domain.Merchant }

func (f *auditMerchantFold) apply(_ domain.Record, e domain.Event) {
	f.m = domain.ApplyMerchant(f.m, e)
}

func (f *auditMerchantFold) check(ctx context.Context, rc *auditReplayCheck, s *auditStream) error {
	rows, err := rc.models.merchants.take(ctx, s.ref.ID)
	if err != nil {
		return err
	}
	row, c, ok := auditRowOf(rc, s, "merchants", rows)
	if !ok {
		return nil
	}
	m := f.m
	if m.ID != s.ref.ID {
		c.eq("id (merchant.created's id)", s.ref.ID, m.ID)
	}
	c.eq("name", m.Name, row.name)
	c.eq("country", m.Country, row.country)
	c.eq("currency", m.Currency, row.currency)
	c.eq("payout_method", m.PayoutMethod, row.payoutMethod)
	c.eq("bank_name", m.BankName, row.bankName)
	c.eq("account_number", m.AccountNumber, row.accountNumber)
	c.eq("phone_number", m.PhoneNumber, row.phone)
	c.eq("lnurl", m.LNURL, row.lnurl)
	c.eq("tenant_id", s.ref.TenantID, row.tenant)
	auditStreamColumns(c, s, row.version, row.created, row.updated)
	return nil
}

// auditPaymentFold is a payment stream: payments, payment_documents,
// payment_deadlines, webhook_attempts.
type auditPaymentFold struct {
	p          domain.Payment
	docs       []domain.PaymentDocumentAttached
	attempts   []domain.PaymentWebhookAttempted // the first of each (event, attempt), as ON CONFLICT DO NOTHING keeps
	deliveries auditDeliveries
}

func (f *auditPaymentFold) apply(r domain.Record, e domain.Event) {
	f.p = domain.ApplyPayment(f.p, e)
	f.deliveries.apply(r, e, f.p)
	switch e := e.(type) {
	case domain.PaymentDocumentAttached:
		f.docs = append(f.docs, e)
	case domain.PaymentWebhookAttempted:
		if !slices.ContainsFunc(f.attempts, func(a domain.PaymentWebhookAttempted) bool {
			return a.EventID == e.EventID && a.Attempt == e.Attempt
		}) {
			f.attempts = append(f.attempts, e)
		}
	}
}

func (f *auditPaymentFold) check(ctx context.Context, rc *auditReplayCheck, s *auditStream) error {
	rows, err := rc.models.payments.take(ctx, s.ref.ID)
	if err != nil {
		return err
	}
	docs, err := rc.models.paymentDocs.take(ctx, s.ref.ID)
	if err != nil {
		return err
	}
	deadlines, err := rc.models.deadlines.take(ctx, s.ref.ID)
	if err != nil {
		return err
	}
	attempts, err := rc.models.attempts.take(ctx, s.ref.ID)
	if err != nil {
		return err
	}
	deliveries, err := rc.models.deliveries.take(ctx, s.ref.ID)
	if err != nil {
		return err
	}
	if err := f.deliveries.check(rc, s, deliveries); err != nil {
		return err
	}
	p := f.p
	if row, c, ok := auditRowOf(rc, s, "payments", rows); ok {
		c.eq("user_id", p.UserID, row.user)
		c.eq("merchant_id", p.MerchantID, row.merchant)
		c.eq("status", p.Status, row.status)
		state, err := json.Marshal(p)
		if err != nil {
			return fmt.Errorf("encode payment %s: %w", s.ref.ID, err)
		}
		c.json("state", state, row.state)
		// Numbers are compared by value above, so 1500.0 for 1500 passes
		// there; the API reads the state into domain.Payment, which that
		// fails (an int64 member). The row must read as the API reads it.
		var read domain.Payment
		if err := json.Unmarshal(row.state, &read); err != nil {
			c.note("state: the API cannot read it: %v", err)
		}
		c.eq("tenant_id", s.ref.TenantID, row.tenant)
		auditStreamColumns(c, s, row.version, row.created, row.updated)
	}

	byID := map[uuid.UUID]auditPaymentDocRow{}
	for _, d := range docs {
		byID[d.id] = d
	}
	for _, d := range f.docs {
		c := auditFields{f: &rc.replay, subject: "payment_documents " + d.DocumentID.String()}
		row, ok := byID[d.DocumentID]
		if !ok {
			c.note("missing: attached in %s", s.subject)
			continue
		}
		delete(byID, d.DocumentID)
		rc.rows++
		c.eq("tenant_id", s.ref.TenantID, row.tenant)
		c.eq("file_name", d.FileName, row.fileName)
		c.eq("content_type", d.ContentType, row.contentType)
		c.eq("size", d.Size, row.size)
		c.eq("sha256", d.SHA256, row.sha256)
		c.eq("created_at", d.At, row.created)
	}
	for _, d := range docs {
		if _, left := byID[d.id]; left {
			rc.models.paymentDocs.extra(d)
		}
	}

	// A payment waits on its deadline while it is created (the projection
	// inserts it with payment.created and deletes it on the next status).
	c := auditFields{f: &rc.replay, subject: "payment_deadlines " + s.ref.ID.String()}
	switch {
	case p.Status == domain.StatusCreated && len(deadlines) == 0:
		c.note("missing: the payment is created and must expire at %s", p.ExpiresAt.UTC().Format(time.RFC3339Nano))
	case p.Status == domain.StatusCreated:
		rc.rows++
		c.eq("tenant_id", s.ref.TenantID, deadlines[0].tenant)
		c.eq("expires_at", p.ExpiresAt, deadlines[0].expires)
		deadlines = deadlines[1:]
	}
	for _, d := range deadlines {
		rc.models.deadlines.extra(d)
	}

	type attemptKey struct {
		event   uuid.UUID
		attempt int
	}
	stored := map[attemptKey]auditAttemptRow{}
	for _, a := range attempts {
		stored[attemptKey{a.event, a.attempt}] = a
	}
	for _, a := range f.attempts {
		k := attemptKey{a.EventID, a.Attempt}
		c := auditFields{f: &rc.replay, subject: fmt.Sprintf("webhook_attempts %s/%d", a.EventID, a.Attempt)}
		row, ok := stored[k]
		if !ok {
			c.note("missing: recorded in %s", s.subject)
			continue
		}
		delete(stored, k)
		rc.rows++
		c.eq("tenant_id", s.ref.TenantID, row.tenant)
		c.eq("type", a.Type, row.typ)
		c.eq("at", a.At, row.at)
		c.eq("status_code", a.StatusCode, row.status)
		c.eq("duration_ms", a.DurationMs, row.duration)
		c.eq("error", a.Error, row.err)
	}
	for _, a := range attempts {
		if _, left := stored[attemptKey{a.event, a.attempt}]; left {
			rc.models.attempts.extra(a)
		}
	}
	return nil
}
