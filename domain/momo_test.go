package domain

import (
	"fmt"
	"testing"

	"github.com/google/uuid"
)

// withMomo is u with accounts of the given phone numbers added through the
// decisions; it returns their ids in order.
func withMomo(t testing.TB, u User, phones ...string) (User, []uuid.UUID) {
	t.Helper()
	var ids []uuid.UUID
	for _, p := range phones {
		id := uuid.New()
		events, err := DecideAddMomoAccount(u, AddMomoAccount{AccountID: id, PhoneNumber: p, MobileNetwork: MomoNetwork, CountryCode: MomoCountry})
		if err != nil {
			t.Fatalf("add %s: %v", p, err)
		}
		u, ids = fold(u, events...), append(ids, id)
	}
	return u, ids
}

func kenyan(i int) string { return fmt.Sprintf("+2547%08d", i) }

func TestDecideAddMomoAccount(t *testing.T) {
	t.Parallel()
	one, _ := withMomo(t, newUser(), kenyan(1))
	var ten User
	ten, _ = withMomo(t, newUser(), kenyan(0), kenyan(1), kenyan(2), kenyan(3), kenyan(4), kenyan(5), kenyan(6), kenyan(7), kenyan(8), kenyan(9))
	valid := AddMomoAccount{PhoneNumber: "+254712345678", MobileNetwork: "MOMO", CountryCode: "KE", Label: ptr(" Mum ")}
	tests := []struct {
		name     string
		state    User
		mutate   func(*AddMomoAccount)
		want     []string
		wantKind Kind
		wantCode string
		wantFld  []string
	}{
		{name: "first account becomes the default", state: newUser(),
			want: []string{"user.momo_account_added", "user.default_momo_account_changed"}},
		{name: "second account", state: one, want: []string{"user.momo_account_added"}},
		{name: "+2541 prefix", state: one, mutate: func(c *AddMomoAccount) { c.PhoneNumber = "+254112345678" },
			want: []string{"user.momo_account_added"}},
		{name: "no label", state: one, mutate: func(c *AddMomoAccount) { c.Label = nil }, want: []string{"user.momo_account_added"}},
		{name: "phone missing", state: one, mutate: func(c *AddMomoAccount) { c.PhoneNumber = "" },
			wantKind: Invalid, wantCode: "validation_failed", wantFld: []string{"phoneNumber"}},
		{name: "phone +2548", state: one, mutate: func(c *AddMomoAccount) { c.PhoneNumber = "+254812345678" },
			wantKind: Invalid, wantCode: "validation_failed", wantFld: []string{"phoneNumber"}},
		{name: "phone 12 characters", state: one, mutate: func(c *AddMomoAccount) { c.PhoneNumber = "+25471234567" },
			wantKind: Invalid, wantCode: "validation_failed", wantFld: []string{"phoneNumber"}},
		{name: "phone 14 characters", state: one, mutate: func(c *AddMomoAccount) { c.PhoneNumber = "+2547123456789" },
			wantKind: Invalid, wantCode: "validation_failed", wantFld: []string{"phoneNumber"}},
		{name: "phone without plus", state: one, mutate: func(c *AddMomoAccount) { c.PhoneNumber = "2547123456789" },
			wantKind: Invalid, wantCode: "validation_failed", wantFld: []string{"phoneNumber"}},
		{name: "phone of another country", state: one, mutate: func(c *AddMomoAccount) { c.PhoneNumber = "+256712345678" },
			wantKind: Invalid, wantCode: "validation_failed", wantFld: []string{"phoneNumber"}},
		{name: "network lower case", state: one, mutate: func(c *AddMomoAccount) { c.MobileNetwork = "momo" },
			wantKind: Invalid, wantCode: "validation_failed", wantFld: []string{"mobileNetwork"}},
		{name: "country lower case", state: one, mutate: func(c *AddMomoAccount) { c.CountryCode = "ke" },
			wantKind: Invalid, wantCode: "validation_failed", wantFld: []string{"countryCode"}},
		{name: "country missing", state: one, mutate: func(c *AddMomoAccount) { c.CountryCode = "" },
			wantKind: Invalid, wantCode: "validation_failed", wantFld: []string{"countryCode"}},
		{name: "label too long", state: one, mutate: func(c *AddMomoAccount) { c.Label = ptr(string(make([]byte, 101))) },
			wantKind: Invalid, wantCode: "validation_failed", wantFld: []string{"label"}},
		{name: "phone already on the profile", state: one, mutate: func(c *AddMomoAccount) { c.PhoneNumber = kenyan(1) },
			wantKind: Conflict, wantCode: "momo_phone_exists", wantFld: []string{"phoneNumber"}},
		{name: "eleventh account", state: ten, wantKind: Invalid, wantCode: "too_many_momo_accounts"},
		{name: "eleventh account with a number on the profile", state: ten,
			mutate:   func(c *AddMomoAccount) { c.PhoneNumber = kenyan(3) },
			wantKind: Conflict, wantCode: "momo_phone_exists"},
		{name: "disabled user", state: disabled(one), wantKind: NotFound, wantCode: "not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := valid
			c.AccountID = uuid.New()
			if tt.mutate != nil {
				tt.mutate(&c)
			}
			events, err := DecideAddMomoAccount(tt.state, c)
			if tt.wantCode != "" {
				wantError(t, err, tt.wantKind, tt.wantCode, tt.wantFld...)
				return
			}
			wantTypes(t, events, err, tt.want...)
			u := fold(tt.state, events...)
			got := u.MomoAccounts[len(u.MomoAccounts)-1]
			wantLabel := ""
			if c.Label != nil {
				wantLabel = "Mum"
			}
			if got.ID != c.AccountID || got.PhoneNumber != c.PhoneNumber || got.Label != wantLabel ||
				got.MobileNetwork != MomoNetwork || got.CountryCode != MomoCountry {
				t.Errorf("got %+v, want the account of %+v", got, c)
			}
			if len(tt.state.MomoAccounts) == 0 && (u.DefaultMomoAccountID == nil || *u.DefaultMomoAccountID != c.AccountID) {
				t.Errorf("got default %v, want %s", u.DefaultMomoAccountID, c.AccountID)
			}
			if len(tt.state.MomoAccounts) > 0 && !sameValue(u.DefaultMomoAccountID, tt.state.DefaultMomoAccountID) {
				t.Errorf("got default %v, want it unchanged at %v", u.DefaultMomoAccountID, tt.state.DefaultMomoAccountID)
			}
		})
	}
}

func TestDecideUpdateMomoAccount(t *testing.T) {
	t.Parallel()
	u, ids := withMomo(t, newUser(), kenyan(1), kenyan(2))
	def, other := ids[0], ids[1]
	tests := []struct {
		name        string
		id          uuid.UUID
		body        string
		want        []string
		wantKind    Kind
		wantCode    string
		wantFld     []string
		wantDefault uuid.UUID
	}{
		{name: "label", id: other, body: `{"label":"Dad"}`, want: []string{"user.momo_account_updated"}},
		{name: "label cleared", id: other, body: `{"label":null}`},
		{name: "phone", id: other, body: `{"phoneNumber":"+254799999999"}`, want: []string{"user.momo_account_updated"}},
		{name: "phone unchanged", id: other, body: `{"phoneNumber":"` + kenyan(2) + `"}`},
		{name: "phone of another account", id: other, body: `{"phoneNumber":"` + kenyan(1) + `"}`,
			wantKind: Conflict, wantCode: "momo_phone_exists", wantFld: []string{"phoneNumber"}},
		{name: "phone invalid", id: other, body: `{"phoneNumber":"+254812345678"}`,
			wantKind: Invalid, wantCode: "validation_failed", wantFld: []string{"phoneNumber"}},
		{name: "phone null", id: other, body: `{"phoneNumber":null}`,
			wantKind: Invalid, wantCode: "validation_failed", wantFld: []string{"phoneNumber"}},
		{name: "isDefault null", id: other, body: `{"isDefault":null}`,
			wantKind: Invalid, wantCode: "validation_failed", wantFld: []string{"isDefault"}},
		{name: "promote", id: other, body: `{"isDefault":true}`, want: []string{"user.default_momo_account_changed"},
			wantDefault: other},
		{name: "promote the default", id: def, body: `{"isDefault":true}`},
		{name: "isDefault false on the default", id: def, body: `{"isDefault":false}`,
			wantKind: Invalid, wantCode: "default_required"},
		{name: "isDefault false on the default with a label", id: def, body: `{"isDefault":false,"label":"x"}`,
			wantKind: Invalid, wantCode: "default_required"},
		{name: "isDefault false on another account", id: other, body: `{"isDefault":false}`},
		{name: "label and promote", id: other, body: `{"label":"Dad","isDefault":true}`,
			want: []string{"user.momo_account_updated", "user.default_momo_account_changed"}, wantDefault: other},
		{name: "unknown id", id: uuid.New(), body: `{"label":"x"}`, wantKind: NotFound, wantCode: "not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			events, err := DecideUpdateMomoAccount(u, UpdateMomoAccount{AccountID: tt.id, Patch: mustBody[MomoPatch](t, tt.body)})
			if tt.wantCode != "" {
				wantError(t, err, tt.wantKind, tt.wantCode, tt.wantFld...)
				return
			}
			wantTypes(t, events, err, tt.want...)
			after := fold(u, events...)
			want := def
			if tt.wantDefault != uuid.Nil {
				want = tt.wantDefault
			}
			if *after.DefaultMomoAccountID != want {
				t.Errorf("got default %s, want %s", after.DefaultMomoAccountID, want)
			}
			if len(after.MomoAccounts) != 2 {
				t.Errorf("got %d accounts, want 2", len(after.MomoAccounts))
			}
		})
	}
}

func TestPromotionRecordsThePreviousDefault(t *testing.T) {
	t.Parallel()
	u, ids := withMomo(t, newUser(), kenyan(1), kenyan(2))
	events, err := DecideUpdateMomoAccount(u, UpdateMomoAccount{AccountID: ids[1], Patch: MomoPatch{IsDefault: Some(true)}})
	wantTypes(t, events, err, "user.default_momo_account_changed")
	if e := events[0].(DefaultMomoAccountChanged); *e.AccountID != ids[1] || *e.PreviousAccountID != ids[0] {
		t.Errorf("got %s from %s, want %s from %s", e.AccountID, e.PreviousAccountID, ids[1], ids[0])
	}
}

func TestDecideRemoveMomoAccount(t *testing.T) {
	t.Parallel()
	u, ids := withMomo(t, newUser(), kenyan(1), kenyan(2))
	tests := []struct {
		name        string
		id          uuid.UUID
		want        []string
		wantDefault *uuid.UUID
		wantCode    string
	}{
		{name: "another account", id: ids[1], want: []string{"user.momo_account_removed"}, wantDefault: &ids[0]},
		{name: "the default: none is promoted", id: ids[0],
			want: []string{"user.default_momo_account_changed", "user.momo_account_removed"}},
		{name: "unknown id", id: uuid.New(), wantCode: "not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			events, err := DecideRemoveMomoAccount(u, tt.id)
			if tt.wantCode != "" {
				wantError(t, err, NotFound, tt.wantCode)
				return
			}
			wantTypes(t, events, err, tt.want...)
			after := fold(u, events...)
			if !sameValue(after.DefaultMomoAccountID, tt.wantDefault) || len(after.MomoAccounts) != 1 {
				t.Errorf("got default %v and %d accounts, want %v and 1", after.DefaultMomoAccountID, len(after.MomoAccounts), tt.wantDefault)
			}
		})
	}
}

func TestOnlyTheFirstAccountBecomesTheDefault(t *testing.T) {
	t.Parallel()
	u, ids := withMomo(t, newUser(), kenyan(1), kenyan(2))
	events, err := DecideRemoveMomoAccount(u, ids[0])
	wantTypes(t, events, err, "user.default_momo_account_changed", "user.momo_account_removed")
	u = fold(u, events...)
	if u, _ := withMomo(t, u, kenyan(3)); u.DefaultMomoAccountID != nil {
		t.Errorf("got default %v, want none: accounts remained, so the new one is not the first", u.DefaultMomoAccountID)
	}
	events, err = DecideRemoveMomoAccount(u, ids[1])
	wantTypes(t, events, err, "user.momo_account_removed")
	u, added := withMomo(t, fold(u, events...), kenyan(4))
	if u.DefaultMomoAccountID == nil || *u.DefaultMomoAccountID != added[0] {
		t.Errorf("got default %v, want the new first account %s", u.DefaultMomoAccountID, added[0])
	}
}
