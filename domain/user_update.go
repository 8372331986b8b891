package domain

import (
	"reflect"
	"slices"
	"strings"
	"time"
)

// Entity types and identity document types (contract §3).
const (
	EntityIndividual = "individual"
	EntityBusiness   = "business"
)

var (
	entityTypes     = []string{EntityIndividual, EntityBusiness}
	idDocumentTypes = []string{"passport", "national_id", "drivers_license", "residence_permit"}
)

// kycFields are the fields of PATCH /users that lock once isVerified is true
// (contract §3: names, dob, nationality, birthCountry, address, id document).
var kycFields = []string{"firstName", "middleName", "lastName", "dob", "nationality", "birthCountry",
	"addressLine1", "addressLine2", "addressCity", "addressState", "addressPostalCode", "addressCountry",
	"idDocumentType", "idDocumentNumber"}

// UserDetails are the fields of spec §2.1 that PATCH /users/{userId} sets, as
// stored. An empty string, a nil pointer or an empty slice means null: not
// filled yet. PATCH /profile shares FirstName, Sector and Address. The
// categories (entityType, sector, idDocumentType) are published; the rest
// identifies the user and is personal data (contract §9).
type UserDetails struct {
	EntityType       string           `json:"entityType"`
	FirstName        string           `json:"firstName" ledger:"personal"`
	MiddleName       string           `json:"middleName" ledger:"personal"`
	LastName         string           `json:"lastName" ledger:"personal"`
	DOB              string           `json:"dob" ledger:"personal"`         // YYYY-MM-DD
	Nationality      []string         `json:"nationality" ledger:"personal"` // ISO 3166-1 alpha-3
	BirthCountry     string           `json:"birthCountry" ledger:"personal"`
	Sector           string           `json:"sector"`
	Address          *Address         `json:"address" ledger:"personal"`
	IDDocumentType   string           `json:"idDocumentType"` // lowercase
	IDDocumentNumber string           `json:"idDocumentNumber" ledger:"personal"`
	Business         *Business        `json:"business" ledger:"personal"`
	BusinessPersons  []BusinessPerson `json:"businessPersons" ledger:"personal"`
}

// UserPatch is the body of PATCH /users/{userId}: exactly the fields of
// contract §3. An absent field is left alone and null clears one (business
// and businessPersons are replaced whole). Decode it with unknown fields
// disallowed; Optional decodes nested objects just as strictly.
type UserPatch struct {
	FirstName         Optional[string]           `json:"firstName"`
	MiddleName        Optional[string]           `json:"middleName"`
	LastName          Optional[string]           `json:"lastName"`
	DOB               Optional[string]           `json:"dob"`
	Nationality       Optional[[]string]         `json:"nationality"`
	BirthCountry      Optional[string]           `json:"birthCountry"`
	Sector            Optional[string]           `json:"sector"`
	AddressLine1      Optional[string]           `json:"addressLine1"`
	AddressLine2      Optional[string]           `json:"addressLine2"`
	AddressCity       Optional[string]           `json:"addressCity"`
	AddressState      Optional[string]           `json:"addressState"`
	AddressPostalCode Optional[string]           `json:"addressPostalCode"`
	AddressCountry    Optional[string]           `json:"addressCountry"`
	IDDocumentType    Optional[string]           `json:"idDocumentType"`
	IDDocumentNumber  Optional[string]           `json:"idDocumentNumber"`
	EntityType        Optional[string]           `json:"entityType"`
	Business          Optional[Business]         `json:"business"`
	BusinessPersons   Optional[[]BusinessPerson] `json:"businessPersons"`
	IsVerified        Optional[bool]             `json:"isVerified"`
}

// UpdateUser is PATCH /users/{userId}. ByTenant is true for a tenant token,
// the only kind that may set isVerified.
type UpdateUser struct {
	Patch    UserPatch
	ByTenant bool
}

// UserUpdated records the user's details after a patch that changed them:
// the whole set, so a reader needs no earlier event, and the names of the
// fields that changed, spelled as in the request.
type UserUpdated struct {
	Changed []string `json:"changed"`
	UserDetails
}

// UserVerificationChanged records a tenant setting isVerified (contract §3).
// It is an event of its own, not a field of user.updated, so the KYC lock's
// history reads plainly: unverified, corrected, verified again.
type UserVerificationChanged struct {
	IsVerified bool `json:"isVerified"`
}

func (UserUpdated) EventType() string             { return "user.updated" }
func (UserVerificationChanged) EventType() string { return "user.verification_changed" }

var (
	_ = register(EventDef{Type: "user.updated", Version: 1, New: func() Event { return new(UserUpdated) },
		Doc: "A user's KYC or KYB details changed; data holds them all and the names of the changed fields."})
	_ = register(EventDef{Type: "user.verification_changed", Version: 1,
		New: func() Event { return new(UserVerificationChanged) },
		Doc: "A tenant verified a user, locking the KYC fields, or unverified them to allow corrections."})
)

// DecideUpdateUser applies a PATCH /users/{userId} (contract §3). It checks
// every present field, then the rules on the state after the patch
// (business and a director and a ubo when entityType is business), then the
// KYC lock (409 kyc_locked). Setting isVerified false comes first and so
// unlocks the fields in the same patch; setting it true comes last. A patch
// that changes nothing returns no events.
func DecideUpdateUser(u User, c UpdateUser, now time.Time) ([]Event, error) {
	if err := requireActive(u); err != nil {
		return nil, err
	}
	p := c.Patch
	if p.IsVerified.Set && !c.ByTenant {
		return nil, &Error{Kind: Invalid, Code: "field_not_allowed", Message: "isVerified can be set only with a tenant token",
			Fields: []FieldError{{Field: "isVerified", Message: "can be set only with a tenant token"}}}
	}
	var fe fieldErrors
	next := fe.patchDetails(u.UserDetails, p, now)
	if p.IsVerified.Null {
		fe.add("isVerified", "must be true or false")
	}
	if len(fe) == 0 {
		fe.entityRules(next)
	}
	if err := fe.err(); err != nil {
		return nil, err
	}
	changed := changedDetails(u.UserDetails, next)
	verified := u.IsVerified
	var events []Event
	if p.IsVerified.Set && !p.IsVerified.Value && verified {
		events, verified = append(events, UserVerificationChanged{IsVerified: false}), false
	}
	if verified {
		if err := kycLocked(changed, kycFields); err != nil {
			return nil, err
		}
	}
	if len(changed) > 0 {
		events = append(events, UserUpdated{Changed: changed, UserDetails: next})
	}
	if p.IsVerified.Set && p.IsVerified.Value && !verified {
		events = append(events, UserVerificationChanged{IsVerified: true})
	}
	return events, nil
}

// patchDetails returns d with every present field of p checked and applied.
func (fe *fieldErrors) patchDetails(d UserDetails, p UserPatch, now time.Time) UserDetails {
	text := func(field string, max int) func(string) string {
		return func(s string) string { return fe.text(field, s, max) }
	}
	set(&d.FirstName, p.FirstName, text("firstName", 100))
	set(&d.MiddleName, p.MiddleName, text("middleName", 100))
	set(&d.LastName, p.LastName, text("lastName", 100))
	set(&d.DOB, p.DOB, func(s string) string { return fe.date("dob", s, now, earliestBirthYear) })
	set(&d.Nationality, p.Nationality, func(cs []string) []string { return fe.countryCodes("nationality", cs) })
	set(&d.BirthCountry, p.BirthCountry, func(s string) string { return fe.country("birthCountry", s) })
	set(&d.Sector, p.Sector, text("sector", 100))
	set(&d.IDDocumentType, p.IDDocumentType, func(s string) string { return fe.idDocumentType("idDocumentType", s) })
	set(&d.IDDocumentNumber, p.IDDocumentNumber, text("idDocumentNumber", 50))
	set(&d.EntityType, p.EntityType, func(s string) string { return fe.oneOf("entityType", s, entityTypes) })
	set(&d.BusinessPersons, p.BusinessPersons, func(ps []BusinessPerson) []BusinessPerson { return fe.businessPersons(ps, now) })
	if p.Business.Set {
		d.Business = nil
		if !p.Business.Null {
			b := fe.business(p.Business.Value, now)
			d.Business = &b
		}
	}
	d.Address = fe.patchAddress(d.Address, p)
	return d
}

// patchAddress applies the flat addressXxx fields. The address after the
// patch is either null (every field null) or complete (line1, city,
// postalCode and country given), as spec §2.3 shapes it.
func (fe *fieldErrors) patchAddress(cur *Address, p UserPatch) *Address {
	var a Address
	if cur != nil {
		a = *cur
	}
	keep := func(s string) string { return s }
	fields := []struct {
		dst *string
		o   Optional[string]
	}{{&a.Line1, p.AddressLine1}, {&a.Line2, p.AddressLine2}, {&a.City, p.AddressCity},
		{&a.State, p.AddressState}, {&a.PostalCode, p.AddressPostalCode}, {&a.Country, p.AddressCountry}}
	touched := false
	for _, f := range fields {
		set(f.dst, f.o, keep)
		touched = touched || f.o.Set
	}
	if !touched {
		return cur
	}
	if a == (Address{}) {
		return nil
	}
	a = fe.address(a, flat)
	return &a
}

// entityRules are the rules on the state after the patch (contract §3).
func (fe *fieldErrors) entityRules(d UserDetails) {
	if d.EntityType == EntityBusiness {
		if d.Business == nil {
			fe.add("business", "is required when entityType is business")
		}
		if !hasDirectorAndUBO(d.BusinessPersons) {
			fe.add("businessPersons", "must include at least one director and one ubo when entityType is business")
		}
		return
	}
	if d.Business != nil {
		fe.add("business", "can be set only when entityType is business")
	}
	if len(d.BusinessPersons) > 0 {
		fe.add("businessPersons", "can be set only when entityType is business")
	}
}

// idDocumentType normalises a case-insensitive identity document type to lowercase.
func (fe *fieldErrors) idDocumentType(field, s string) string {
	return fe.oneOf(field, strings.ToLower(strings.TrimSpace(s)), idDocumentTypes)
}

// set applies one patch field to dst: absent leaves it, null clears it, a
// value is checked and stored.
func set[T any](dst *T, o Optional[T], check func(T) T) {
	switch {
	case !o.Set:
	case o.Null:
		var zero T
		*dst = zero
	default:
		*dst = check(o.Value)
	}
}

// changedDetails names the fields that differ between a and b, in the
// order of contract §3.
func changedDetails(a, b UserDetails) []string {
	var changed []string
	diff := func(field string, same bool) {
		if !same {
			changed = append(changed, field)
		}
	}
	aa, ba := derefAddress(a.Address), derefAddress(b.Address)
	diff("firstName", a.FirstName == b.FirstName)
	diff("middleName", a.MiddleName == b.MiddleName)
	diff("lastName", a.LastName == b.LastName)
	diff("dob", a.DOB == b.DOB)
	diff("nationality", slices.Equal(a.Nationality, b.Nationality))
	diff("birthCountry", a.BirthCountry == b.BirthCountry)
	diff("sector", a.Sector == b.Sector)
	diff("addressLine1", aa.Line1 == ba.Line1)
	diff("addressLine2", aa.Line2 == ba.Line2)
	diff("addressCity", aa.City == ba.City)
	diff("addressState", aa.State == ba.State)
	diff("addressPostalCode", aa.PostalCode == ba.PostalCode)
	diff("addressCountry", aa.Country == ba.Country)
	diff("idDocumentType", a.IDDocumentType == b.IDDocumentType)
	diff("idDocumentNumber", a.IDDocumentNumber == b.IDDocumentNumber)
	diff("entityType", a.EntityType == b.EntityType)
	diff("business", reflect.DeepEqual(a.Business, b.Business))
	diff("businessPersons", len(a.BusinessPersons) == 0 && len(b.BusinessPersons) == 0 ||
		reflect.DeepEqual(a.BusinessPersons, b.BusinessPersons))
	return changed
}

func derefAddress(a *Address) Address {
	if a == nil {
		return Address{}
	}
	return *a
}

// kycLocked is the 409 kyc_locked naming every locked field in changed.
func kycLocked(changed, locked []string) error {
	var fe fieldErrors
	for _, f := range changed {
		if slices.Contains(locked, f) {
			fe.add(f, "is locked while the user is verified")
		}
	}
	if len(fe) == 0 {
		return nil
	}
	return &Error{Kind: Conflict, Code: "kyc_locked",
		Message: "KYC fields cannot change while the user is verified; a tenant sets isVerified false first", Fields: fe}
}
