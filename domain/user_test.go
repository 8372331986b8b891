package domain

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/uuid"
)

func TestDecideCreateUser(t *testing.T) {
	t.Parallel()
	active := fold(User{}, UserCreated{UserID: uuid.New(), Email: "ann@example.com", Name: "Ann", Role: RoleNormal})
	tests := []struct {
		name     string
		state    User
		cmd      CreateUser
		want     []string // event types
		wantKind Kind
		wantCode string
		wantFld  []string
	}{
		{name: "new user", cmd: CreateUser{Email: " Ann@Example.COM ", Name: " Ann "}, want: []string{"user.created"}},
		{name: "name of 200 characters", cmd: CreateUser{Email: "a@example.com", Name: strings.Repeat("é", 200)},
			want: []string{"user.created"}},
		{name: "empty name", cmd: CreateUser{Email: "a@example.com", Name: "  "},
			wantKind: Invalid, wantCode: "validation_failed", wantFld: []string{"name"}},
		{name: "name of 201 characters", cmd: CreateUser{Email: "a@example.com", Name: strings.Repeat("a", 201)},
			wantKind: Invalid, wantCode: "validation_failed", wantFld: []string{"name"}},
		{name: "control character in name", cmd: CreateUser{Email: "a@example.com", Name: "A\x00nn"},
			wantKind: Invalid, wantCode: "validation_failed", wantFld: []string{"name"}},
		{name: "bad email", cmd: CreateUser{Email: "nope", Name: "Ann"},
			wantKind: Invalid, wantCode: "validation_failed", wantFld: []string{"email"}},
		{name: "email already registered: idempotent", state: active, cmd: CreateUser{Email: "ANN@example.com", Name: "Other"}},
		{name: "email of a disabled user", state: disabled(active), cmd: CreateUser{Email: "ann@example.com", Name: "Ann"},
			wantKind: Conflict, wantCode: "user_inactive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.cmd.UserID = uuid.New()
			events, err := DecideCreateUser(tt.state, tt.cmd)
			if tt.wantCode != "" {
				wantError(t, err, tt.wantKind, tt.wantCode, tt.wantFld...)
				return
			}
			wantTypes(t, events, err, tt.want...)
			if len(events) == 0 {
				return
			}
			c := events[0].(UserCreated)
			if c.Role != RoleNormal || c.UserID != tt.cmd.UserID || c.Email != strings.ToLower(strings.TrimSpace(tt.cmd.Email)) ||
				c.Name != strings.TrimSpace(tt.cmd.Name) {
				t.Errorf("got %+v, want a trimmed Normal User with the lower-case email", c)
			}
			if u := fold(User{}, events...); u.Status != UserActive || u.ID != tt.cmd.UserID {
				t.Errorf("got status %s id %s, want Active %s", u.Status, u.ID, tt.cmd.UserID)
			}
		})
	}
}

func TestDecideDisableUser(t *testing.T) {
	t.Parallel()
	owner := fold(User{}, UserCreated{UserID: uuid.New(), Email: "o@example.com", Name: "O", Role: RoleAdmin})
	tests := []struct {
		name     string
		state    User
		wantKind Kind
		wantCode string
	}{
		{name: "active normal user", state: newUser()},
		{name: "the tenant's owner", state: owner, wantKind: Invalid, wantCode: "cannot_disable_owner"},
		{name: "already inactive", state: disabled(newUser()), wantKind: NotFound, wantCode: "not_found"},
		{name: "no such user", state: User{}, wantKind: NotFound, wantCode: "not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			events, err := DecideDisableUser(tt.state)
			if tt.wantCode != "" {
				wantError(t, err, tt.wantKind, tt.wantCode)
				return
			}
			wantTypes(t, events, err, "user.disabled")
			if got := fold(tt.state, events...).Status; got != UserInactive {
				t.Errorf("got status %s, want %s", got, UserInactive)
			}
		})
	}
}

func TestEveryDecisionOnADisabledUserIsNotFound(t *testing.T) {
	t.Parallel()
	base := newUser()
	acc := uuid.New()
	base = fold(base, MomoAccountAdded{AccountID: acc, PhoneNumber: "+254712345678", MobileNetwork: MomoNetwork, CountryCode: MomoCountry})
	gone := disabled(base)
	decisions := map[string]func(User) ([]Event, error){
		"update user": func(u User) ([]Event, error) {
			return DecideUpdateUser(u, UpdateUser{Patch: UserPatch{Sector: Some("farming")}, ByTenant: true}, testNow)
		},
		"disable user":   DecideDisableUser,
		"update profile": func(u User) ([]Event, error) { return DecideUpdateProfile(u, ProfilePatch{Sector: Some("x")}) },
		"add momo": func(u User) ([]Event, error) {
			return DecideAddMomoAccount(u, AddMomoAccount{AccountID: uuid.New(), PhoneNumber: "+254112345678",
				MobileNetwork: MomoNetwork, CountryCode: MomoCountry})
		},
		"update momo": func(u User) ([]Event, error) {
			return DecideUpdateMomoAccount(u, UpdateMomoAccount{AccountID: acc, Patch: MomoPatch{Label: Some("x")}})
		},
		"remove momo": func(u User) ([]Event, error) { return DecideRemoveMomoAccount(u, acc) },
		"upload document": func(u User) ([]Event, error) {
			return DecideUploadKYCDocument(u, UploadKYCDocument{DocumentID: uuid.New(), DocumentType: "passport",
				FileName: "p.pdf", ContentType: ContentTypePDF, Size: 10, SHA256: strings.Repeat("a", 64)})
		},
	}
	for name, decide := range decisions {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if _, err := decide(base); err != nil {
				t.Fatalf("got %v on the active user, want success", err)
			}
			_, err := decide(gone)
			wantError(t, err, NotFound, "not_found")
		})
	}
}

// TestEventsRoundTripAndHidePersonalData stores every user event type and
// checks it decodes to the same value and publishes without its private fields.
func TestEventsRoundTripAndHidePersonalData(t *testing.T) {
	t.Parallel()
	addr := &Address{Line1: "1 Road", City: "Nairobi", PostalCode: "00100", Country: "KEN"}
	events := []Event{
		UserCreated{UserID: uuid.New(), Email: "a@example.com", Name: "Ann", Role: RoleNormal},
		UserDisabled{},
		UserUpdated{Changed: []string{"firstName"}, UserDetails: UserDetails{EntityType: EntityBusiness, FirstName: "Ann",
			Nationality: []string{"KEN"}, Address: addr, Business: &Business{CompanyName: "Acme", Type: "LIMITED"},
			BusinessPersons: []BusinessPerson{{Types: []string{"director", "ubo"}, Ownership: ptr(100.0),
				Person: Person{FirstName: "A", LastName: "B"}}}}},
		UserVerificationChanged{IsVerified: true},
		ProfileUpdated{Changed: []string{"phoneNumber"}, Name: "Ann", PhoneNumber: "+254712345678", Address: addr},
		MomoAccountAdded{AccountID: uuid.New(), Label: "Mum", PhoneNumber: "+254712345678", MobileNetwork: "MOMO", CountryCode: "KE"},
		MomoAccountUpdated{AccountID: uuid.New(), Changed: []string{"label"}, Label: "Dad", PhoneNumber: "+254712345678"},
		DefaultMomoAccountChanged{AccountID: ptr(uuid.New())},
		DefaultMomoAccountChanged{PreviousAccountID: ptr(uuid.New())},
		MomoAccountRemoved{AccountID: uuid.New()},
		KYCDocumentUploaded{DocumentID: uuid.New(), DocumentType: "passport", FileName: "ann.pdf",
			ContentType: ContentTypePDF, Size: 5, SHA256: strings.Repeat("0", 64)},
	}
	for _, e := range events {
		if got := roundTrip(t, e); !sameValue(got, e) {
			t.Errorf("got %+v, want %+v", got, e)
		}
		rec, err := NewRecord(StreamRef{TenantID: uuid.New(), Type: "user", ID: uuid.New()}, 1, e, Metadata{}, uuid.New(), testNow)
		if err != nil {
			t.Fatal(err)
		}
		public, err := PublicData(rec)
		if err != nil {
			t.Fatal(err)
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(public, &fields); err != nil {
			t.Fatal(err)
		}
		def, _ := LookupEvent(e.EventType())
		for _, p := range def.Private {
			if _, ok := fields[p]; ok {
				t.Errorf("%s: published data has private field %q", e.EventType(), p)
			}
		}
		for _, personal := range []string{"Ann", "+254712345678", "Nairobi", "ann.pdf", "Mum", "Dad"} {
			if strings.Contains(string(public), personal) {
				t.Errorf("%s: published data %s holds %q", e.EventType(), public, personal)
			}
		}
	}
}

func TestApplyUserNeverChangesAnEarlierState(t *testing.T) {
	t.Parallel()
	a, b := uuid.New(), uuid.New()
	u := fold(newUser(),
		MomoAccountAdded{AccountID: a, PhoneNumber: "+254712345678"},
		DefaultMomoAccountChanged{AccountID: &a},
		MomoAccountAdded{AccountID: b, PhoneNumber: "+254712345679"},
		KYCDocumentUploaded{DocumentID: uuid.New()})
	before := fold(u) // a copy sharing u's slices
	_ = fold(u, MomoAccountUpdated{AccountID: a, Label: "x", PhoneNumber: "+254700000000"},
		DefaultMomoAccountChanged{AccountID: &b}, MomoAccountRemoved{AccountID: a},
		MomoAccountAdded{AccountID: uuid.New()}, KYCDocumentUploaded{DocumentID: uuid.New()})
	_ = fold(u, MomoAccountRemoved{AccountID: b}, MomoAccountAdded{AccountID: uuid.New()})
	if len(u.MomoAccounts) != 2 || u.MomoAccounts[0].PhoneNumber != "+254712345678" || u.MomoAccounts[1].ID != b ||
		len(u.KYCDocuments) != 1 || *u.DefaultMomoAccountID != a || !sameValue(u, before) {
		t.Errorf("got %+v, want the state before the later events", u)
	}
}
