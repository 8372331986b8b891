package domain

import (
	"slices"

	"github.com/google/uuid"
)

// User roles (contract §2): the owner created with a tenant is the Admin.
const (
	RoleAdmin  = "Admin"
	RoleNormal = "Normal User"
)

// User statuses (spec §3.2).
const (
	UserActive   = "Active"
	UserInactive = "Inactive"
)

// User is the state of one user's stream: the user of spec §2.1, the profile
// of spec §2.6 (the same user seen by the token holder, contract §4) with its
// momo accounts, and the metadata of its KYC documents.
type User struct {
	ID     uuid.UUID
	Email  string
	Name   string
	Role   string
	Status string
	UserDetails
	IsVerified           bool
	CompanyName          string // profile only; empty means null
	PhoneNumber          string // profile contact number, E.164; empty means null
	MomoAccounts         []MomoAccount
	DefaultMomoAccountID *uuid.UUID // nil, or the ID of one of MomoAccounts
	KYCDocuments         []KYCDocument
}

// UserCreated opens a user's stream.
type UserCreated struct {
	UserID uuid.UUID `json:"userId"`
	Email  string    `json:"email" ledger:"personal"`
	Name   string    `json:"name" ledger:"personal"`
	Role   string    `json:"role"`
}

// UserDisabled records DELETE /users/{userId}: the user is Inactive, hidden
// from lists and 404 on every user endpoint, and its tokens stop working
// (spec §3.2). No operation returns a user to Active.
type UserDisabled struct{}

func (UserCreated) EventType() string  { return "user.created" }
func (UserDisabled) EventType() string { return "user.disabled" }

var (
	_ = register(EventDef{Type: "user.created", Version: 1, New: func() Event { return new(UserCreated) },
		Doc: "A user was created in a tenant."})
	_ = register(EventDef{Type: "user.disabled", Version: 1, New: func() Event { return new(UserDisabled) },
		Doc: "A user was disabled (Inactive): hidden from lists, 404 everywhere, its tokens revoked."})
)

// ApplyUser folds one event into u. It cannot fail: events are facts. It
// never changes a slice that an earlier state shares.
func ApplyUser(u User, e Event) User {
	switch e := e.(type) {
	case UserCreated:
		u = User{ID: e.UserID, Email: e.Email, Name: e.Name, Role: e.Role, Status: UserActive}
	case UserDisabled:
		u.Status = UserInactive
	case UserUpdated:
		u.UserDetails = e.UserDetails
	case UserVerificationChanged:
		u.IsVerified = e.IsVerified
	case ProfileUpdated:
		u.Name, u.CompanyName, u.Sector, u.FirstName, u.PhoneNumber, u.Address =
			e.Name, e.CompanyName, e.Sector, e.FirstName, e.PhoneNumber, e.Address
	case MomoAccountAdded:
		u.MomoAccounts = append(slices.Clip(u.MomoAccounts), MomoAccount{ID: e.AccountID, Label: e.Label,
			PhoneNumber: e.PhoneNumber, MobileNetwork: e.MobileNetwork, CountryCode: e.CountryCode})
	case MomoAccountUpdated:
		u.MomoAccounts = slices.Clone(u.MomoAccounts)
		if i := momoIndex(u.MomoAccounts, e.AccountID); i >= 0 {
			u.MomoAccounts[i].Label, u.MomoAccounts[i].PhoneNumber = e.Label, e.PhoneNumber
		}
	case DefaultMomoAccountChanged:
		u.DefaultMomoAccountID = nil
		if e.AccountID != nil {
			id := *e.AccountID
			u.DefaultMomoAccountID = &id
		}
	case MomoAccountRemoved:
		u.MomoAccounts = slices.DeleteFunc(slices.Clone(u.MomoAccounts),
			func(a MomoAccount) bool { return a.ID == e.AccountID })
		if u.DefaultMomoAccountID != nil && *u.DefaultMomoAccountID == e.AccountID {
			u.DefaultMomoAccountID = nil // DefaultMomoAccountChanged came first; this only guards
		}
	case KYCDocumentUploaded:
		u.KYCDocuments = append(slices.Clip(u.KYCDocuments), KYCDocument{ID: e.DocumentID,
			DocumentType: e.DocumentType, FileName: e.FileName, ContentType: e.ContentType, Size: e.Size, SHA256: e.SHA256})
	}
	return u
}

// requireActive is the 404 of every decision on a user that does not exist
// or is Inactive (spec §3.2: never say which).
func requireActive(u User) error {
	if u.ID == uuid.Nil || u.Status != UserActive {
		return Errorf(NotFound, "not_found", "user not found")
	}
	return nil
}

// CreateUser is POST /users (spec §4.2, contract §3).
type CreateUser struct {
	UserID uuid.UUID // a new UUIDv7 for a new stream
	Email  string
	Name   string
}

// DecideCreateUser creates a Normal User. u is the state of the user who
// already has the normalised email in the tenant, or the zero User: creation
// is idempotent by email, so an active user with that email gives no events
// (the caller answers 200 with u) and an inactive one 409 user_inactive.
func DecideCreateUser(u User, c CreateUser) ([]Event, error) {
	var fe fieldErrors
	name := fe.required("name", c.Name, 200)
	if err := fe.err(); err != nil {
		return nil, err
	}
	email, err := NormaliseEmail(c.Email)
	if err != nil {
		return nil, err
	}
	switch {
	case u.ID == uuid.Nil:
		return []Event{UserCreated{UserID: c.UserID, Email: email, Name: name, Role: RoleNormal}}, nil
	case u.Email != email:
		return nil, Errorf(Internal, "user_exists", "user %s exists with another email", u.ID)
	case u.Status != UserActive:
		return nil, Errorf(Conflict, "user_inactive", "the user with this email is disabled")
	}
	return nil, nil
}

// DecideDisableUser is DELETE /users/{userId} (spec §3.2, §4.2). The tenant's
// owner (the Admin user) cannot be disabled: that is the spec's "caller
// disabling its own account" (contract §2).
func DecideDisableUser(u User) ([]Event, error) {
	if err := requireActive(u); err != nil {
		return nil, err
	}
	if u.Role == RoleAdmin {
		return nil, Errorf(Invalid, "cannot_disable_owner", "the tenant's owner user cannot be disabled")
	}
	return []Event{UserDisabled{}}, nil
}
