package rebuild

import (
	"encoding/json"
	"errors"
	"math/big"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/shopspring/decimal"

	"github.com/ledger/ledger/domain"
	"github.com/ledger/ledger/projections"
)

// tenants.go
func (s *streamFold) applyTenant(r *domain.Record, e domain.Event) error {
	switch e := e.(type) {
	case domain.TenantCreated:
		if e.TenantID != r.StreamID || s.tenant != nil {
			return errUnfoldable
		}
		s.tenant = &tenantRow{id: e.TenantID, name: e.Name, owner: e.OwnerUserID, version: r.StreamVersion,
			created: r.RecordedAt, updated: r.RecordedAt}
		return nil
	case domain.APIKeyCreated:
		for _, k := range s.keys {
			if k.key == e.APIKey {
				return errUnfoldable // the insert would fail; let it, in the projector
			}
		}
		s.keys = append(s.keys, &apiKeyRow{key: e.APIKey, tenant: r.TenantID, hash: e.SecretHash, created: r.RecordedAt})
	case domain.APIKeyRevoked:
		var found bool
		for _, k := range s.keys {
			if k.key == e.APIKey && k.tenant == r.TenantID {
				at := r.RecordedAt
				k.revoked, found = &at, true
			}
		}
		if !found {
			return errUnfoldable // a key of another stream, or none
		}
	}
	if s.tenant == nil {
		return errUnfoldable
	}
	s.tenant.version, s.tenant.updated = r.StreamVersion, r.RecordedAt
	return nil
}

// user_project.go
func (s *streamFold) applyUser(r *domain.Record, e domain.Event) error {
	if c, ok := e.(domain.UserCreated); ok {
		if c.UserID != r.StreamID || s.user != nil {
			return errUnfoldable
		}
		s.user = &userRow{id: c.UserID, tenant: r.TenantID, record: r.ID, email: c.Email, name: c.Name, role: c.Role,
			status: domain.UserActive, version: r.StreamVersion, created: r.RecordedAt, updated: r.RecordedAt, details: jsonObject{}}
		return nil
	}
	u := s.user
	if u == nil {
		return errUnfoldable
	}
	momo := func(id uuid.UUID) (int, error) {
		for i, m := range s.momo {
			if m.id == id {
				return i, nil
			}
		}
		return 0, errUnfoldable
	}
	switch e := e.(type) {
	case domain.UserUpdated:
		d, err := parseObject([]byte(projections.JSONOf(e.UserDetails)))
		if err != nil {
			return err
		}
		u.details = d
	case domain.UserVerificationChanged:
		u.verified = e.IsVerified
	case domain.UserDisabled:
		u.status = domain.UserInactive
	case domain.ProfileUpdated:
		u.name, u.company, u.phone = e.Name, e.CompanyName, e.PhoneNumber
		sector, _ := json.Marshal(e.Sector)
		first, _ := json.Marshal(e.FirstName)
		u.details.set("sector", sector)
		u.details.set("firstName", first)
		u.details.set("address", json.RawMessage(projections.JSONOf(e.Address)))
	case domain.MomoAccountAdded:
		for _, m := range s.momo {
			if m.phone == e.PhoneNumber {
				return errUnfoldable // unique (user_id, phone_number): the insert would fail
			}
		}
		if _, err := momo(e.AccountID); err == nil {
			return errUnfoldable
		}
		s.momo = append(s.momo, &momoRow{id: e.AccountID, tenant: r.TenantID, user: r.StreamID, label: e.Label,
			phone: e.PhoneNumber, network: e.MobileNetwork, country: e.CountryCode, added: r.StreamVersion})
	case domain.MomoAccountUpdated:
		i, err := momo(e.AccountID)
		if err != nil {
			return err
		}
		for j, m := range s.momo {
			if j != i && m.phone == e.PhoneNumber {
				return errUnfoldable
			}
		}
		s.momo[i].label, s.momo[i].phone = e.Label, e.PhoneNumber
	case domain.DefaultMomoAccountChanged:
		u.defaultMomo = nil
		if e.AccountID != nil {
			id := *e.AccountID
			u.defaultMomo = &id
		}
	case domain.MomoAccountRemoved:
		i, err := momo(e.AccountID)
		if err != nil {
			return err
		}
		s.momo = slices.Delete(s.momo, i, i+1)
	case domain.KYCDocumentUploaded:
		s.insert("kyc_documents", e.DocumentID, r.TenantID, r.StreamID, e.DocumentType, e.FileName, e.ContentType,
			e.Size, e.SHA256, r.RecordedAt)
	}
	u.version, u.updated = r.StreamVersion, r.RecordedAt
	return nil
}

// merchants.go
func (s *streamFold) applyMerchant(r *domain.Record, e domain.Event) error {
	if c, ok := e.(domain.MerchantCreated); ok {
		if c.MerchantID != r.StreamID || s.merchant != nil {
			return errUnfoldable
		}
		s.merchant = &merchantRow{e: c, tenant: r.TenantID, version: r.StreamVersion, created: r.RecordedAt, updated: r.RecordedAt}
		return nil
	}
	if s.merchant == nil {
		return errUnfoldable
	}
	s.merchant.version, s.merchant.updated = r.StreamVersion, r.RecordedAt
	return nil
}

// payments.go
func (s *streamFold) applyPayment(r *domain.Record, e domain.Event) error {
	switch e := e.(type) {
	case domain.PaymentCreated:
		state, err := parseObject(r.Data)
		if err != nil {
			return err
		}
		return s.created(r, state, e.UserID, e.MerchantID, e.Status, e.ExpiresAt)
	case domain.PaymentDocumentAttached:
		s.insert("payment_documents", e.DocumentID, r.TenantID, r.StreamID, e.FileName, e.ContentType, e.Size, e.SHA256, e.At)
		return s.mergePayment(r, e)
	case domain.PaymentWebhookAttempted:
		key := attemptKey{e.EventID, e.Attempt}
		if s.attempts == nil {
			s.attempts = map[attemptKey]bool{}
		}
		if !s.attempts[key] { // ON CONFLICT DO NOTHING
			s.attempts[key] = true
			s.attemptRows = append(s.attemptRows, attemptRow{event: e.EventID, tenant: r.TenantID, payment: r.StreamID, attempt: e.Attempt,
				typ: e.Type, at: e.At, statusCode: e.StatusCode, durationMs: e.DurationMs, err: e.Error})
		}
		var d *deliveryRow
		for _, x := range s.deliveries {
			if x.event == e.EventID {
				d = x
			}
		}
		if d == nil {
			return errUnfoldable // the delivery of another stream, or none
		}
		switch {
		case d.delivered: // the DELETE left no row to move on
		case e.Delivered:
			d.delivered = true
		default:
			d.status = "pending"
			if e.NextAttemptAt == nil {
				d.status = "exhausted"
			}
			d.attempts = e.Attempt
			if e.NextAttemptAt != nil {
				d.next = *e.NextAttemptAt
			}
		}
		return s.mergePayment(r, e)
	default:
		if err := s.mergePayment(r, e); err != nil {
			return err
		}
		if domain.StatusOf(e) != "" {
			s.deadline = nil
			s.queueWebhook(r)
		}
		return nil
	}
}

// created is payments.go's PaymentCreated case: the row with the event's
// data as its state, the deadline, the first delivery.
func (s *streamFold) created(r *domain.Record, state jsonObject, user, merchant uuid.UUID, status string, expires time.Time) error {
	if s.payment != nil {
		return errUnfoldable
	}
	s.payment = &paymentRow{id: r.StreamID, tenant: r.TenantID, user: user, merchant: merchant, status: status,
		state: state, version: r.StreamVersion, created: r.RecordedAt, updated: r.RecordedAt}
	s.deadline = &expires
	s.queueWebhook(r)
	return nil
}

// The fast path of payment.created, the largest event: its data is the
// payment's JSON, which the fold splits into members anyway, so the four
// fields the row needs are read from those members instead of decoding the
// whole event into domain.PaymentCreated. Only at the registered schema
// version (no upcaster runs) and with each member present as
// encoding/json wrote it; otherwise errSlowPath, and the event is decoded.
var (
	createdType    = domain.PaymentCreated{}.EventType()
	createdVersion = func() int { d, _ := domain.LookupEvent(createdType); return d.Version }()
	errSlowPath    = errors.New("decode the event")
)

func (s *streamFold) paymentCreated(r *domain.Record) error {
	state, err := parseObject(r.Data)
	if err != nil {
		return errSlowPath
	}
	member := func(name string) []byte {
		raw, _ := state.get(name)
		b, _ := domain.PlainJSONString(raw)
		return b
	}
	user, err1 := uuid.ParseBytes(member("userId"))
	merchant, err2 := uuid.ParseBytes(member("merchantId"))
	var expires time.Time
	err3 := expires.UnmarshalText(member("expiresAt")) // as encoding/json reads it
	status := domain.Intern(member("status"))
	if err1 != nil || err2 != nil || err3 != nil || status == "" {
		return errSlowPath
	}
	if err := s.created(r, state, user, merchant, status, expires); err != nil {
		return err
	}
	return nil // no postings: payment.created carries none (PostingsOf)
}

// queueWebhook is the delivery the projection writes with a status event
// (projectPayment, mergePayment): a pending delivery with the payment's
// state, when the state has a webhookUrl.
func (s *streamFold) queueWebhook(r *domain.Record) {
	p := s.payment
	if p == nil {
		return
	}
	url, ok := p.state.get("webhookUrl")
	if !ok || string(url) == "null" || string(url) == `""` {
		return
	}
	s.deliveries = append(s.deliveries, &deliveryRow{event: r.ID, version: r.StreamVersion, typ: r.Type, occurred: r.RecordedAt,
		status: "pending", next: r.RecordedAt})
}

// copyStateToDeliveries gives the deliveries queued since the payment's
// state last changed their copy of it. It runs before the state changes
// and when the stream's rows are written: a delivery delivered before
// either (most are) never pays for the copy of a state it does not keep.
func (s *streamFold) copyStateToDeliveries() {
	var text []byte
	for _, d := range s.deliveries {
		if d.payment == nil && !d.delivered {
			if text == nil {
				text = s.payment.state.text()
			}
			d.payment = text
		}
	}
}

// mergePayment is mergePayment's UPDATE.
func (s *streamFold) mergePayment(r *domain.Record, e domain.Event) error {
	p := s.payment
	if p == nil {
		return errUnfoldable
	}
	logs, ok := p.state.get("statusLogs")
	if !ok || len(logs) == 0 || logs[0] != '[' {
		return errUnfoldable // jsonb_set would store NULL or wrap a scalar
	}
	s.changes = stateChanges{s: s} // the stream's: a writer of its own would be an allocation an event
	changes := &s.changes
	line, added := domain.WritePaymentChanges(e, changes)
	if changes.logs {
		return errUnfoldable
	}
	if added {
		if logs[len(logs)-1] != ']' {
			return errUnfoldable
		}
		changes.touch()
		logs = s.values.withLine(logs, line)
	}
	p.state.set("statusLogs", logs)
	if status := domain.StatusOf(e); status != "" {
		p.status = status
	}
	p.version, p.updated = r.StreamVersion, r.RecordedAt
	return nil
}

// attemptKey is webhook_attempts' primary key within one payment (migration
// 0018).
type attemptKey struct {
	event   uuid.UUID
	attempt int
}

// setNumeric makes n d as the numeric the projector's parameter becomes:
// it is sent as d.String() and pgx parses that into a coefficient without
// trailing zeros (1.50 is sent as "1.5", 15 × 10^-1, stored with scale 1;
// 150 as 15 × 10^1, scale 0). Amounts of up to 18 digits, all of them in
// practice, take no detour through text and big.Int arithmetic, and reuse
// n's big.Int: the COPY encodes a row before the next is set.
func setNumeric(n *pgtype.Numeric, d decimal.Decimal) {
	if d.NumDigits() <= 18 {
		c, exp := d.CoefficientInt64(), d.Exponent()
		if c == 0 {
			exp = 0
		}
		for c != 0 && c%10 == 0 {
			c /= 10
			exp++
		}
		if n.Int == nil {
			n.Int = new(big.Int)
		}
		n.Int.SetInt64(c)
		n.Exp, n.NaN, n.InfinityModifier, n.Valid = exp, false, pgtype.Finite, true
		return
	}
	*n = pgtype.Numeric{}
	if err := n.Scan(d.String()); err != nil {
		*n = pgtype.Numeric{} // NULL: the NOT NULL column refuses it loudly
	}
}
