package projections

import (
	"github.com/ledger/ledger/domain"
)

// userStream projects a user's stream: the users row (the user and its
// profile), its momo_accounts and its kyc_documents.
type userStream struct{ u domain.User }

func (s *userStream) state() any { return s.u }

func (s *userStream) fold(e domain.Event) { s.u = domain.ApplyUser(s.u, e) }

func (s *userStream) rows(w Rows, r *domain.Record, e domain.Event) {
	switch e := e.(type) {
	case domain.MomoAccountAdded:
		w.Put(momoAccountsTable, e.AccountID, r.TenantID, r.StreamID, e.Label, e.PhoneNumber, e.MobileNetwork,
			e.CountryCode, r.StreamVersion)
	case domain.MomoAccountUpdated:
		w.Update(momoAccountsTable, []any{e.AccountID}, momoAccountChanges, e.Label, e.PhoneNumber)
	case domain.MomoAccountRemoved:
		w.Delete(momoAccountsTable, e.AccountID)
	case domain.KYCDocumentUploaded:
		w.Put(kycDocumentsTable, e.DocumentID, r.TenantID, r.StreamID, e.DocumentType, e.FileName, e.ContentType,
			e.Size, e.SHA256, r.RecordedAt)
	}
}

var (
	momoAccountChanges = []string{"label", "phone_number"}
	userChanges        = []string{"email", "name", "role", "status", "is_verified", "details", "company_name",
		"phone_number", "default_momo_account_id", "version", "updated_at"}
)

func (s *userStream) put(w Rows, first, last *domain.Record) {
	u := s.u
	w.Put(usersTable, u.ID, first.TenantID, first.ID, u.Email, u.Name, u.Role, u.Status, u.IsVerified, JSONOf(u.UserDetails),
		u.CompanyName, u.PhoneNumber, u.DefaultMomoAccountID, last.StreamVersion, first.RecordedAt, last.RecordedAt)
}

func (s *userStream) update(w Rows, last *domain.Record) {
	u := s.u
	w.Update(usersTable, []any{last.StreamID}, userChanges, u.Email, u.Name, u.Role, u.Status, u.IsVerified,
		JSONOf(u.UserDetails), u.CompanyName, u.PhoneNumber, u.DefaultMomoAccountID, last.StreamVersion, last.RecordedAt)
}
