package domain

import (
	"reflect"
	"strings"
)

// interned holds one copy of the strings decoding an event history makes
// over and over: the member names of every registered event (a payment's
// state among them) and the values the domain itself writes most
// (statuses, posting sides and accounts, currencies, rails, event types).
// A rebuild reads millions of them; each was a small allocation of its own.
// It is filled once, in init, after every event type has registered, and
// only read after that.
var interned = map[string]string{}

func init() {
	intern := func(s string) { interned[s] = s }
	for _, d := range EventDefs() {
		intern(d.Type)
		stream, _, _ := strings.Cut(d.Type, ".") // its stream's type, as events are named
		intern(stream)
		internNames(reflect.TypeOf(d.New()), intern, map[reflect.Type]bool{})
	}
	for _, s := range PaymentStatuses {
		intern(s)
	}
	for _, s := range []string{Debit, Credit, AccountCustomerFunds, AccountConversion, AccountPayoutPayable, AccountFees,
		AccountChange, AccountRefunds, ChangeNone, ChangePending, "sats"} {
		intern(s)
	}
	for _, rail := range []string{FundingLightning, FundingBankTransfer, FundingMomo, FundingUSDT, PayoutBank, PayoutMomo, PayoutLightning} {
		intern(rail)
		intern(ExternalAccount(rail))
	}
	for _, m := range []map[string]string{merchantCurrency, fromCurrencies} {
		for _, currency := range m {
			intern(currency)
		}
	}
	fillInternTable()
}

// internNames interns the JSON member names of t's structs, nested ones
// included.
func internNames(t reflect.Type, intern func(string), seen map[reflect.Type]bool) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] {
		return
	}
	seen[t] = true
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-" || !f.IsExported():
			continue
		case name == "":
			name = f.Name
		}
		intern(name)
		internNames(f.Type, intern, seen)
	}
}

// Intern returns b as a string, without allocating when it is one of the
// strings the domain writes most (interned).
func Intern(b []byte) string {
	if len(b) == 0 || len(b) > internLongest {
		return string(b)
	}
	for i := internSlot(b); ; i = (i + 1) % internSlots {
		s := internTable[i]
		if s == string(b) { // no copy made to compare
			return s
		}
		if s == "" {
			return string(b)
		}
	}
}

// internTable holds the interned strings for Intern, in an open-addressing
// table probed from internSlot. A rebuild interns every member name and
// string value it reads (some 20 million for a million events), and a
// map's lookup hashes every byte of each, which showed in a rebuild's
// profile (docs/performance.md, "Replay"); most values (ids, times,
// messages) are longer than any interned string and need no lookup at all.
const internSlots = 1024 // more than four times the strings interned, so probes are short

var (
	internTable   [internSlots]string
	internLongest int
)

// internSlot is where the probe for b starts: a hash of its length and
// three of its bytes, which tell the interned strings apart well enough.
func internSlot(b []byte) int {
	n := len(b)
	h := uint32(n)*0x9e3779b1 ^ uint32(b[0])<<5 ^ uint32(b[n/2])<<13 ^ uint32(b[n-1])<<21
	h ^= h >> 15
	h *= 0x85ebca6b
	h ^= h >> 13
	return int(h % internSlots)
}

func fillInternTable() {
	if len(interned) > internSlots/2 {
		panic("domain: more interned strings than internSlots allows")
	}
	for s := range interned {
		i := internSlot([]byte(s))
		for internTable[i] != "" {
			i = (i + 1) % internSlots
		}
		internTable[i] = s
		internLongest = max(internLongest, len(s))
	}
}

// PlainJSONString is the content of v, a JSON string of printable ASCII
// without escapes, as a slice of v: what encoding/json would decode it to,
// without decoding. false for any other JSON value.
func PlainJSONString(v []byte) ([]byte, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return nil, false
	}
	for _, c := range v[1 : len(v)-1] {
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return nil, false
		}
	}
	return v[1 : len(v)-1], true
}
