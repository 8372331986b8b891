package main

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ledger/ledger/domain"
)

// TestEventTime reads the time of a real CloudEvent envelope, and refuses
// bodies without one.
func TestEventTime(t *testing.T) {
	at := time.Date(2026, 11, 25, 17, 4, 5, 123000000, time.UTC) // the envelope keeps milliseconds
	tenant := uuid.New()
	rec, err := domain.NewRecord(domain.StreamRef{TenantID: tenant, Type: "tenant", ID: tenant}, 3,
		newAPIKeyEvent(), domain.Metadata{Actor: "test"}, uuid.New(), at)
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(domain.Envelope(rec))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := eventTime(body); err != nil || !got.Equal(at) {
		t.Errorf("eventTime: got %v, %v; want %v", got, err, at)
	}
	for _, bad := range []string{`{"id":"x"}`, `{"time":3}`, `{"time":"yesterday"}`, `[]`, ``} {
		if _, err := eventTime([]byte(bad)); err == nil {
			t.Errorf("eventTime(%s): no error", bad)
		}
	}
}
