package projections

import (
	"encoding/json"

	"github.com/jackc/pgx/v5"

	"github.com/ledger/ledger/domain"
)

// projectUser queues the statements that apply one user event to the users
// momo_accounts and kyc_documents read models. Every statement also moves the user's
// version and updated_at on, so GET /users/{id} shows when it last changed.
func projectUser(b *pgx.Batch, r domain.Record, e domain.Event) {
	touch := func(set string, args ...any) {
		b.Queue(`UPDATE users SET `+set+`version = $1, updated_at = $2 WHERE id = $3`,
			append([]any{r.StreamVersion, r.RecordedAt, r.StreamID}, args...)...)
	}
	switch e := e.(type) {
	case domain.UserCreated:
		b.Queue(`INSERT INTO users (id, tenant_id, record_id, email, name, role, status, version, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)`,
			e.UserID, r.TenantID, r.ID, e.Email, e.Name, e.Role, domain.UserActive, r.StreamVersion, r.RecordedAt)
	case domain.UserUpdated:
		touch(`details = $4, `, JSONOf(e.UserDetails))
	case domain.UserVerificationChanged:
		touch(`is_verified = $4, `, e.IsVerified)
	case domain.UserDisabled:
		touch(`status = $4, `, domain.UserInactive)
	case domain.ProfileUpdated:
		touch(`name = $4, company_name = $5, phone_number = $6,
			details = details || jsonb_build_object('sector', $7::text, 'firstName', $8::text, 'address', $9::jsonb), `,
			e.Name, e.CompanyName, e.PhoneNumber, e.Sector, e.FirstName, JSONOf(e.Address))
	case domain.MomoAccountAdded:
		b.Queue(`INSERT INTO momo_accounts (id, tenant_id, user_id, label, phone_number, mobile_network, country_code, added_version)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, e.AccountID, r.TenantID, r.StreamID, e.Label, e.PhoneNumber,
			e.MobileNetwork, e.CountryCode, r.StreamVersion)
		touch("")
	case domain.MomoAccountUpdated:
		b.Queue(`UPDATE momo_accounts SET label = $2, phone_number = $3 WHERE id = $1`, e.AccountID, e.Label, e.PhoneNumber)
		touch("")
	case domain.DefaultMomoAccountChanged:
		touch(`default_momo_account_id = $4, `, e.AccountID)
	case domain.MomoAccountRemoved:
		b.Queue(`DELETE FROM momo_accounts WHERE id = $1`, e.AccountID)
		touch("")
	case domain.KYCDocumentUploaded:
		b.Queue(`INSERT INTO kyc_documents (id, tenant_id, user_id, document_type, file_name, content_type, size, sha256, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, e.DocumentID, r.TenantID, r.StreamID, e.DocumentType, e.FileName,
			e.ContentType, e.Size, e.SHA256, r.RecordedAt)
		touch("")
	default:
		touch("")
	}
}

// JSONOf encodes v for a jsonb parameter. The values are the domain's own
// structs, which always encode. The rebuild's fold must write the same
// jsonb, and calls this for the values it does not encode itself.
func JSONOf(v any) string {
	raw, _ := json.Marshal(v)
	return string(raw)
}
