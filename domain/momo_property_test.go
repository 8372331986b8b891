package domain

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/google/uuid"
)

// checkMomoInvariants fails unless DefaultMomoAccountID is nil or names an
// existing account (spec §3.3), and accounts have distinct ids and numbers
// and number at most MaxMomoAccounts.
func checkMomoInvariants(t *testing.T, u User, where string) {
	t.Helper()
	if u.DefaultMomoAccountID != nil && momoIndex(u.MomoAccounts, *u.DefaultMomoAccountID) < 0 {
		t.Fatalf("%s: got default %s, want nil or one of %v", where, *u.DefaultMomoAccountID, u.MomoAccounts)
	}
	if len(u.MomoAccounts) > MaxMomoAccounts {
		t.Fatalf("%s: got %d accounts, want at most %d", where, len(u.MomoAccounts), MaxMomoAccounts)
	}
	ids, phones := map[uuid.UUID]bool{}, map[string]bool{}
	for _, a := range u.MomoAccounts {
		if ids[a.ID] || phones[a.PhoneNumber] {
			t.Fatalf("%s: got %v, want distinct ids and numbers", where, u.MomoAccounts)
		}
		ids[a.ID], phones[a.PhoneNumber] = true, true
	}
}

// TestMomoDefaultInvariantUnderRandomCommands runs random sequences of add,
// update and remove commands through the decisions and checks the
// invariants after every single Apply, on the events as decided and as
// stored and decoded again.
func TestMomoDefaultInvariantUnderRandomCommands(t *testing.T) {
	t.Parallel()
	seen := map[string]int{} // outcomes, to show the sequences reach every rule
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 42))
		u := newUser()
		stored := u
		for step := range 80 {
			where := func(what string) string {
				return "seed " + strconv.Itoa(int(seed)) + " step " + strconv.Itoa(step) + " " + what
			}
			what, events, err := randomMomoCommand(rng, u)
			if err != nil {
				if e, ok := err.(*Error); ok {
					seen[e.Code]++
				}
				switch e, _ := err.(*Error); {
				case e == nil, e.Kind == Internal:
					t.Fatalf("%s: got %v, want a caller error", where(what), err)
				case !slices.Contains([]string{"validation_failed", "momo_phone_exists", "too_many_momo_accounts",
					"default_required", "not_found"}, e.Code):
					t.Fatalf("%s: got code %s, want a documented one", where(what), e.Code)
				}
				continue
			}
			before := u
			if len(events) == 0 {
				seen["no change"]++
			}
			for i, e := range events {
				if d, ok := e.(DefaultMomoAccountChanged); ok && d.AccountID == nil {
					seen["default removed"]++
				}
				u = ApplyUser(u, e)
				checkMomoInvariants(t, u, where(what+" after event "+strconv.Itoa(i)+" "+e.EventType()))
				stored = ApplyUser(stored, roundTrip(t, e))
				checkMomoInvariants(t, stored, where(what+" after stored event "+strconv.Itoa(i)))
			}
			if !sameValue(u, stored) {
				t.Fatalf("%s: got stored state %+v, want %+v", where(what), stored, u)
			}
			if len(before.MomoAccounts) == 0 && len(u.MomoAccounts) == 1 &&
				(u.DefaultMomoAccountID == nil || *u.DefaultMomoAccountID != u.MomoAccounts[0].ID) {
				t.Fatalf("%s: got default %v, want the first account", where(what), u.DefaultMomoAccountID)
			}
			if before.DefaultMomoAccountID == nil && u.DefaultMomoAccountID != nil && len(before.MomoAccounts) > 0 &&
				what != "promote" {
				t.Fatalf("%s: a default appeared without a promotion", where(what))
			}
			seen[what]++
		}
	}
	for _, outcome := range []string{"add", "promote", "update", "remove", "no change", "default removed", "validation_failed",
		"momo_phone_exists", "too_many_momo_accounts", "default_required", "not_found"} {
		if seen[outcome] == 0 {
			t.Errorf("got no %q among %v, want the random sequences to reach it", outcome, seen)
		}
	}
	t.Logf("outcomes: %v", seen)
}

// randomMomoCommand decides one random command on u. Numbers come from a
// small pool so duplicates happen; ids are mostly existing ones.
func randomMomoCommand(rng *rand.Rand, u User) (string, []Event, error) {
	phone := func() string {
		if rng.IntN(20) == 0 {
			return "+25471234567" // one digit short
		}
		return kenyan(rng.IntN(14))
	}
	id := func() uuid.UUID {
		if len(u.MomoAccounts) == 0 || rng.IntN(10) == 0 {
			return uuid.New()
		}
		return u.MomoAccounts[rng.IntN(len(u.MomoAccounts))].ID
	}
	switch n := rng.IntN(10); {
	case n < 5: // adds outweigh removals, so profiles reach the limit of 10
		events, err := DecideAddMomoAccount(u, AddMomoAccount{AccountID: uuid.New(), PhoneNumber: phone(),
			MobileNetwork: MomoNetwork, CountryCode: MomoCountry, Label: ptr("L" + strconv.Itoa(rng.IntN(3)))})
		return "add", events, err
	case n < 8:
		var p MomoPatch
		switch rng.IntN(3) {
		case 0:
			p.Label = Some("L" + strconv.Itoa(rng.IntN(3)))
		case 1:
			p.Label = Null[string]()
		}
		if rng.IntN(3) == 0 {
			p.PhoneNumber = Some(phone())
		}
		what := "update"
		switch rng.IntN(3) {
		case 0:
			p.IsDefault, what = Some(true), "promote"
		case 1:
			p.IsDefault = Some(false)
		}
		events, err := DecideUpdateMomoAccount(u, UpdateMomoAccount{AccountID: id(), Patch: p})
		return what, events, err
	}
	events, err := DecideRemoveMomoAccount(u, id())
	return "remove", events, err
}
