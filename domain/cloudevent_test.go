package domain

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"
)

func TestEnvelopeAndPublicData(t *testing.T) {
	t.Parallel()
	tenant, user := uuid.New(), uuid.New()
	rec, err := NewRecord(StreamRef{TenantID: tenant, Type: "user", ID: user}, 1,
		UserCreated{UserID: user, Email: "a@b.example", Name: "Ann", Role: RoleNormal},
		Metadata{Actor: "operator", RequestID: "r1"}, uuid.New(), time.Date(2026, 11, 22, 10, 15, 30, 123456789, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	env := Envelope(rec)
	if env.Type != "ledger.user.created.v1" || env.Subject != "users/"+user.String() || env.Source != "/tenants/"+tenant.String() {
		t.Errorf("got type %q subject %q source %q", env.Type, env.Subject, env.Source)
	}
	if env.Time != "2026-11-22T10:15:30.123Z" {
		t.Errorf("got time %q, want millisecond UTC", env.Time)
	}
	public, err := PublicData(rec)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	if err := json.Unmarshal(public, &fields); err != nil {
		t.Fatal(err)
	}
	for _, private := range []string{"email", "name"} {
		if _, ok := fields[private]; ok {
			t.Errorf("published data has private field %q: %s", private, public)
		}
	}
	if fields["userId"] != user.String() || fields["role"] != RoleNormal {
		t.Errorf("got %s, want userId and role kept", public)
	}
	decoded, err := rec.Decode()
	if err != nil {
		t.Fatal(err)
	}
	if decoded.(UserCreated).Email != "a@b.example" {
		t.Errorf("got %+v, want the stored email back", decoded)
	}
}

func TestDecodeEventRejectsUnknownVersions(t *testing.T) {
	t.Parallel()
	if _, err := DecodeEvent("user.created", 2, []byte(`{}`)); err == nil {
		t.Error("got nil, want an error for a schema version without an upcaster")
	}
	if _, err := DecodeEvent("nope.created", 1, []byte(`{}`)); err == nil {
		t.Error("got nil, want an error for an unknown type")
	}
}

func TestEveryEventTypeIsRegisteredOnceWithPrivateFieldsThatExist(t *testing.T) {
	t.Parallel()
	for _, def := range EventDefs() {
		e := def.New()
		if e.EventType() != def.Type {
			t.Errorf("%s: New returns %s", def.Type, e.EventType())
		}
		raw, _ := json.Marshal(e)
		var fields map[string]any
		json.Unmarshal(raw, &fields)
		for _, p := range def.Private {
			if _, ok := fields[p]; !ok {
				t.Errorf("%s: private field %q is not a field of the event", def.Type, p)
			}
		}
	}
}
