package domain

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
)

// testNow is the clock of every decision in these tests.
var testNow = time.Date(2026, 11, 22, 10, 15, 30, 0, time.UTC)

// fold applies events to u in order.
func fold(u User, events ...Event) User {
	for _, e := range events {
		u = ApplyUser(u, e)
	}
	return u
}

// newUser is an active Normal User with nothing filled.
func newUser() User {
	return fold(User{}, UserCreated{UserID: uuid.New(), Email: "ann@example.com", Name: "Ann", Role: RoleNormal})
}

// verified is u after a tenant verified it.
func verified(u User) User { return fold(u, UserVerificationChanged{IsVerified: true}) }

// disabled is u after it was disabled.
func disabled(u User) User { return fold(u, UserDisabled{}) }

// mustBody decodes a request body strictly, as the HTTP layer does.
func mustBody[T any](t testing.TB, body string) T {
	t.Helper()
	var v T
	dec := json.NewDecoder(bytes.NewReader([]byte(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	return v
}

// wantError fails unless err is an *Error of kind and code naming exactly
// fields (in any order; nil fields means "not checked").
func wantError(t testing.TB, err error, kind Kind, code string, fields ...string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("got %v, want a %s error", err, code)
	}
	if e.Kind != kind || e.Code != code {
		t.Fatalf("got kind %d code %s (%v), want kind %d code %s", e.Kind, e.Code, e, kind, code)
	}
	if fields == nil {
		return
	}
	got := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		got[i] = f.Field
	}
	slices.Sort(got)
	want := slices.Sorted(slices.Values(fields))
	if !slices.Equal(got, want) {
		t.Fatalf("got fields %v (%v), want %v", got, e.Fields, want)
	}
}

// typesOf names events, for comparing a decision's output.
func typesOf(events []Event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e.EventType()
	}
	return out
}

// wantTypes fails unless events have exactly the types want.
func wantTypes(t testing.TB, events []Event, err error, want ...string) {
	t.Helper()
	if err != nil {
		t.Fatalf("got error %v, want events %v", err, want)
	}
	if got := typesOf(events); !slices.Equal(got, want) {
		t.Fatalf("got events %v, want %v", got, want)
	}
}

// roundTrip stores and decodes e as the event store does.
func roundTrip(t testing.TB, e Event) Event {
	t.Helper()
	rec, err := NewRecord(StreamRef{TenantID: uuid.New(), Type: "user", ID: uuid.New()}, 1, e, Metadata{}, uuid.New(), testNow)
	if err != nil {
		t.Fatalf("record %T: %v", e, err)
	}
	got, err := rec.Decode()
	if err != nil {
		t.Fatalf("decode %s: %v", rec.Data, err)
	}
	return got
}

func ptr[T any](v T) *T { return &v }

func sameValue(a, b any) bool { return reflect.DeepEqual(a, b) }
