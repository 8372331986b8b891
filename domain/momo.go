package domain

import (
	"fmt"

	"github.com/google/uuid"
)

// Momo account rules (spec §2.7, contract §4): the only network and country,
// case-sensitive, and how many accounts one profile may hold.
const (
	MomoNetwork     = "MOMO"
	MomoCountry     = "KE"
	MaxMomoAccounts = 10
)

// MomoAccount is a registered mobile-money payout number (spec §2.7). Which
// one is the default is the user's DefaultMomoAccountID, not a flag here.
type MomoAccount struct {
	ID            uuid.UUID
	Label         string // empty means null
	PhoneNumber   string // Kenyan mobile, E.164
	MobileNetwork string
	CountryCode   string
}

// MomoAccountAdded records POST /profile/momo.
type MomoAccountAdded struct {
	AccountID     uuid.UUID `json:"accountId"`
	Label         string    `json:"label" ledger:"personal"`
	PhoneNumber   string    `json:"phoneNumber" ledger:"personal"`
	MobileNetwork string    `json:"mobileNetwork"`
	CountryCode   string    `json:"countryCode"`
}

// MomoAccountUpdated records a PATCH /profile/momo/{id} that changed the
// label or the number: both as they are now, and the names of the changed ones.
type MomoAccountUpdated struct {
	AccountID   uuid.UUID `json:"accountId"`
	Changed     []string  `json:"changed"`
	Label       string    `json:"label" ledger:"personal"`
	PhoneNumber string    `json:"phoneNumber" ledger:"personal"`
}

// DefaultMomoAccountChanged records a new default (spec §3.3): the first
// account added, a promotion, or null when the default is removed. It comes
// before the removal, so after every event the default names an existing
// account or is null.
type DefaultMomoAccountChanged struct {
	AccountID         *uuid.UUID `json:"accountId"`
	PreviousAccountID *uuid.UUID `json:"previousAccountId"`
}

// MomoAccountRemoved records DELETE /profile/momo/{id}.
type MomoAccountRemoved struct {
	AccountID uuid.UUID `json:"accountId"`
}

func (MomoAccountAdded) EventType() string          { return "user.momo_account_added" }
func (MomoAccountUpdated) EventType() string        { return "user.momo_account_updated" }
func (DefaultMomoAccountChanged) EventType() string { return "user.default_momo_account_changed" }
func (MomoAccountRemoved) EventType() string        { return "user.momo_account_removed" }

var (
	_ = register(EventDef{Type: "user.momo_account_added", Version: 1, New: func() Event { return new(MomoAccountAdded) },
		Doc: "A mobile-money payout account was added to the profile."})
	_ = register(EventDef{Type: "user.momo_account_updated", Version: 1, New: func() Event { return new(MomoAccountUpdated) },
		Doc: "A momo account's label or phone number changed."})
	_ = register(EventDef{Type: "user.default_momo_account_changed", Version: 1,
		New: func() Event { return new(DefaultMomoAccountChanged) },
		Doc: "The profile's default momo account changed; accountId is null when the default was removed."})
	_ = register(EventDef{Type: "user.momo_account_removed", Version: 1, New: func() Event { return new(MomoAccountRemoved) },
		Doc: "A momo account was removed from the profile."})
)

// AddMomoAccount is POST /profile/momo; the JSON tags are the request body.
type AddMomoAccount struct {
	AccountID     uuid.UUID `json:"-"` // a new UUIDv7, made by the caller
	PhoneNumber   string    `json:"phoneNumber"`
	MobileNetwork string    `json:"mobileNetwork"`
	CountryCode   string    `json:"countryCode"`
	Label         *string   `json:"label"` // optional; nil or empty means none
}

// MomoPatch is the body of PATCH /profile/momo/{id} (contract §4). A null
// label clears it; phoneNumber and isDefault cannot be null.
type MomoPatch struct {
	Label       Optional[string] `json:"label"`
	PhoneNumber Optional[string] `json:"phoneNumber"`
	IsDefault   Optional[bool]   `json:"isDefault"`
}

// UpdateMomoAccount is PATCH /profile/momo/{id}.
type UpdateMomoAccount struct {
	AccountID uuid.UUID
	Patch     MomoPatch
}

// DecideAddMomoAccount adds an account (spec §4.4, contract §4): a Kenyan
// mobile number not already on the profile (409 momo_phone_exists), MOMO,
// KE, at most 10 accounts (400 too_many_momo_accounts). The first account
// becomes the default (spec §3.3: from "no accounts"); an account added while
// others exist without a default does not, as nothing is promoted implicitly.
func DecideAddMomoAccount(u User, c AddMomoAccount) ([]Event, error) {
	if err := requireActive(u); err != nil {
		return nil, err
	}
	var fe fieldErrors
	phone := fe.momoPhone(c.PhoneNumber)
	if c.MobileNetwork != MomoNetwork {
		fe.add("mobileNetwork", "must be "+MomoNetwork)
	}
	if c.CountryCode != MomoCountry {
		fe.add("countryCode", "must be "+MomoCountry)
	}
	var label string
	if c.Label != nil {
		label = fe.optText("label", *c.Label, 100)
	}
	if err := fe.err(); err != nil {
		return nil, err
	}
	if err := phoneTaken(u, phone, uuid.Nil); err != nil {
		return nil, err
	}
	if len(u.MomoAccounts) >= MaxMomoAccounts {
		return nil, Errorf(Invalid, "too_many_momo_accounts", "a profile holds at most %d momo accounts", MaxMomoAccounts)
	}
	if momoIndex(u.MomoAccounts, c.AccountID) >= 0 || c.AccountID == uuid.Nil {
		return nil, Errorf(Internal, "bad_account_id", "account id %s is not new", c.AccountID)
	}
	events := []Event{MomoAccountAdded{AccountID: c.AccountID, Label: label, PhoneNumber: phone,
		MobileNetwork: MomoNetwork, CountryCode: MomoCountry}}
	if len(u.MomoAccounts) == 0 {
		id := c.AccountID
		events = append(events, DefaultMomoAccountChanged{AccountID: &id})
	}
	return events, nil
}

// DecideUpdateMomoAccount changes an account's label or number and promotes
// it with isDefault true, replacing the previous default (spec §3.3).
// isDefault false on the current default is 400 default_required; on
// another account it changes nothing. An unknown id is 404.
func DecideUpdateMomoAccount(u User, c UpdateMomoAccount) ([]Event, error) {
	if err := requireActive(u); err != nil {
		return nil, err
	}
	i := momoIndex(u.MomoAccounts, c.AccountID)
	if i < 0 {
		return nil, Errorf(NotFound, "not_found", "momo account not found")
	}
	acc, p := u.MomoAccounts[i], c.Patch
	isDefault := u.DefaultMomoAccountID != nil && *u.DefaultMomoAccountID == acc.ID
	var fe fieldErrors
	label, phone := acc.Label, acc.PhoneNumber
	set(&label, p.Label, func(s string) string { return fe.optText("label", s, 100) })
	if p.PhoneNumber.Null {
		fe.add("phoneNumber", "cannot be null")
	} else if p.PhoneNumber.Set {
		phone = fe.momoPhone(p.PhoneNumber.Value)
	}
	if p.IsDefault.Null {
		fe.add("isDefault", "must be true or false")
	}
	if err := fe.err(); err != nil {
		return nil, err
	}
	if p.IsDefault.Set && !p.IsDefault.Value && isDefault {
		return nil, Errorf(Invalid, "default_required",
			"this is the default momo account; make another account the default instead")
	}
	if phone != acc.PhoneNumber {
		if err := phoneTaken(u, phone, acc.ID); err != nil {
			return nil, err
		}
	}
	var events []Event
	var changed []string
	if label != acc.Label {
		changed = append(changed, "label")
	}
	if phone != acc.PhoneNumber {
		changed = append(changed, "phoneNumber")
	}
	if len(changed) > 0 {
		events = append(events, MomoAccountUpdated{AccountID: acc.ID, Changed: changed, Label: label, PhoneNumber: phone})
	}
	if p.IsDefault.Value && !isDefault {
		id := acc.ID
		events = append(events, DefaultMomoAccountChanged{AccountID: &id, PreviousAccountID: copyID(u.DefaultMomoAccountID)})
	}
	return events, nil
}

// DecideRemoveMomoAccount removes an account. Removing the default leaves no
// default; nothing is promoted (contract §4). An unknown id is 404.
func DecideRemoveMomoAccount(u User, accountID uuid.UUID) ([]Event, error) {
	if err := requireActive(u); err != nil {
		return nil, err
	}
	if momoIndex(u.MomoAccounts, accountID) < 0 {
		return nil, Errorf(NotFound, "not_found", "momo account not found")
	}
	var events []Event
	if u.DefaultMomoAccountID != nil && *u.DefaultMomoAccountID == accountID {
		events = append(events, DefaultMomoAccountChanged{PreviousAccountID: copyID(u.DefaultMomoAccountID)})
	}
	return append(events, MomoAccountRemoved{AccountID: accountID}), nil
}

// momoPhone checks a momo account's number: a Kenyan mobile in E.164.
func (fe *fieldErrors) momoPhone(s string) string {
	switch {
	case s == "":
		fe.add("phoneNumber", "is required")
	case !IsKenyanMobile(s):
		fe.add("phoneNumber", "must be a Kenyan mobile number in E.164 format: +2547XXXXXXXX or +2541XXXXXXXX")
	}
	return s
}

// phoneTaken is the 409 momo_phone_exists when another account than except
// has phone.
func phoneTaken(u User, phone string, except uuid.UUID) error {
	for _, a := range u.MomoAccounts {
		if a.PhoneNumber == phone && a.ID != except {
			return &Error{Kind: Conflict, Code: "momo_phone_exists", Message: "this phone number is already on the profile",
				Fields: []FieldError{{Field: "phoneNumber", Message: fmt.Sprintf("is already the number of account %s", a.ID)}}}
		}
	}
	return nil
}

func momoIndex(accounts []MomoAccount, id uuid.UUID) int {
	for i, a := range accounts {
		if a.ID == id {
			return i
		}
	}
	return -1
}

func copyID(id *uuid.UUID) *uuid.UUID {
	if id == nil {
		return nil
	}
	c := *id
	return &c
}

// DefaultMomoPhone is the number of u's default momo account, where a momo
// push prompts the payer; "" when u has no default.
func (u User) DefaultMomoPhone() string {
	for _, a := range u.MomoAccounts {
		if u.DefaultMomoAccountID != nil && a.ID == *u.DefaultMomoAccountID {
			return a.PhoneNumber
		}
	}
	return ""
}
