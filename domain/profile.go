package domain

// profileKYCFields are the profile fields that lock once the user is verified
// (spec §2.6: firstName is a KYC field; the address is one as in contract §3).
var profileKYCFields = []string{"firstName", "address"}

// ProfilePatch is the body of PATCH /profile (spec §4.4, contract §4): only
// these fields; any other, the read-only ones included, is refused by the
// decoder (unknown fields disallowed). Absent leaves a field, null clears it
// (name cannot be cleared), and address is replaced whole.
type ProfilePatch struct {
	Name        Optional[string]  `json:"name"`
	CompanyName Optional[string]  `json:"companyName"`
	Sector      Optional[string]  `json:"sector"`
	FirstName   Optional[string]  `json:"firstName"`
	PhoneNumber Optional[string]  `json:"phoneNumber"`
	Address     Optional[Address] `json:"address"`
}

// ProfileUpdated records the editable profile fields after a PATCH /profile
// that changed them, and the names of the changed ones. Name, Sector,
// FirstName and Address are the same fields of the user as in spec §2.1.
// CompanyName is a business name and published; the person's names, phone
// and address are personal data.
type ProfileUpdated struct {
	Changed     []string `json:"changed"`
	Name        string   `json:"name" ledger:"personal"`
	CompanyName string   `json:"companyName"`
	Sector      string   `json:"sector"`
	FirstName   string   `json:"firstName" ledger:"personal"`
	PhoneNumber string   `json:"phoneNumber" ledger:"personal"` // E.164
	Address     *Address `json:"address" ledger:"personal"`
}

func (ProfileUpdated) EventType() string { return "user.profile_updated" }

var _ = register(EventDef{Type: "user.profile_updated", Version: 1, New: func() Event { return new(ProfileUpdated) },
	Doc: "The token holder edited the profile; data holds every editable field and the names of the changed ones."})

// DecideUpdateProfile applies a PATCH /profile to the token holder's user
// (contract §4). firstName and address are KYC fields: changing one while
// the user is verified is 409 kyc_locked. A patch that changes nothing
// returns no events.
func DecideUpdateProfile(u User, p ProfilePatch) ([]Event, error) {
	if err := requireActive(u); err != nil {
		return nil, err
	}
	var fe fieldErrors
	next := ProfileUpdated{Name: u.Name, CompanyName: u.CompanyName, Sector: u.Sector, FirstName: u.FirstName,
		PhoneNumber: u.PhoneNumber, Address: u.Address}
	if p.Name.Null {
		fe.add("name", "cannot be cleared")
	}
	set(&next.Name, p.Name, func(s string) string { return fe.required("name", s, 200) })
	set(&next.CompanyName, p.CompanyName, func(s string) string { return fe.text("companyName", s, 200) })
	set(&next.Sector, p.Sector, func(s string) string { return fe.text("sector", s, 100) })
	set(&next.FirstName, p.FirstName, func(s string) string { return fe.text("firstName", s, 100) })
	set(&next.PhoneNumber, p.PhoneNumber, func(s string) string { return fe.phone("phoneNumber", s) })
	if p.Address.Set {
		next.Address = nil
		if !p.Address.Null {
			a := fe.address(p.Address.Value, nested("address"))
			next.Address = &a
		}
	}
	if err := fe.err(); err != nil {
		return nil, err
	}
	diff := func(field string, same bool) {
		if !same {
			next.Changed = append(next.Changed, field)
		}
	}
	diff("name", next.Name == u.Name)
	diff("companyName", next.CompanyName == u.CompanyName)
	diff("sector", next.Sector == u.Sector)
	diff("firstName", next.FirstName == u.FirstName)
	diff("phoneNumber", next.PhoneNumber == u.PhoneNumber)
	diff("address", derefAddress(next.Address) == derefAddress(u.Address))
	if len(next.Changed) == 0 {
		return nil, nil
	}
	if u.IsVerified {
		if err := kycLocked(next.Changed, profileKYCFields); err != nil {
			return nil, err
		}
	}
	return []Event{next}, nil
}
