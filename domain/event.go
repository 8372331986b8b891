package domain

import (
	"encoding/json"
	"fmt"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"
	"github.com/google/uuid"
)

// Event is a fact about one aggregate. Its Type is the dotted name without the
// "ledger." prefix or version ("user.created"); the version lives in the registry.
type Event interface {
	EventType() string
}

// Metadata says who caused an event and within which request.
type Metadata struct {
	Actor         string `json:"actor,omitempty"`         // "apikey:<key>", "user:<id>", "operator", "system:<worker>"
	RequestID     string `json:"requestId,omitempty"`     // X-Request-Id of the HTTP request
	CorrelationID string `json:"correlationId,omitempty"` // the first request or event of a chain
	CausationID   string `json:"causationId,omitempty"`   // the event that caused this one
}

// StreamRef names one aggregate instance.
type StreamRef struct {
	TenantID uuid.UUID
	Type     string // "tenant", "user", "merchant", "payment"
	ID       uuid.UUID
}

// Record is an event as stored. Position, Hash and PrevHash are zero until the
// sequencer has assigned them after commit.
type Record struct {
	ID            uuid.UUID
	TenantID      uuid.UUID
	StreamType    string
	StreamID      uuid.UUID
	StreamVersion int
	Type          string // "user.created"
	SchemaVersion int
	Data          json.RawMessage
	Meta          Metadata
	RecordedAt    time.Time
	Position      int64
	Hash          string
	PrevHash      string
}

// Stream returns the reference of the record's stream.
func (r Record) Stream() StreamRef {
	return StreamRef{TenantID: r.TenantID, Type: r.StreamType, ID: r.StreamID}
}

// Decode returns the typed event of r.
func (r Record) Decode() (Event, error) {
	return DecodeEvent(r.Type, r.SchemaVersion, r.Data)
}

// DecodeMetadata decodes an event's stored metadata.
func DecodeMetadata(data []byte) (Metadata, error) {
	var m Metadata
	err := unmarshal(data, &m)
	return m, err
}

// DecodePayment decodes a payment's state as a payments row and a webhook
// delivery store it (the JSON of a Payment), with the decoder events use:
// every payment read and every webhook attempt decodes one.
func DecodePayment(data []byte) (Payment, error) {
	var p Payment
	err := unmarshal(data, &p)
	return p, err
}

// unmarshal decodes stored event data or metadata as encoding/json does
// (names matched case-insensitively, unknown members ignored, null, time,
// decimal and json.RawMessage alike), with json v2's decoder: every
// worker load, replay and audit decodes each event it reads, and
// encoding/json took twice the time (docs/performance.md, "Decoding
// events").
func unmarshal(data []byte, v any) error {
	return jsonv2.Unmarshal(data, v, jsonv1.DefaultOptionsV1())
}

// NewRecord builds the record of e as the version-th event of stream.
func NewRecord(stream StreamRef, version int, e Event, meta Metadata, id uuid.UUID, now time.Time) (Record, error) {
	def, ok := eventTypes[e.EventType()]
	if !ok {
		return Record{}, fmt.Errorf("event type %q is not registered", e.EventType())
	}
	data, err := json.Marshal(e)
	if err != nil {
		return Record{}, fmt.Errorf("encode %s: %w", e.EventType(), err)
	}
	return Record{
		ID: id, TenantID: stream.TenantID, StreamType: stream.Type, StreamID: stream.ID,
		StreamVersion: version, Type: e.EventType(), SchemaVersion: def.Version,
		Data: data, Meta: meta, RecordedAt: now.UTC().Truncate(time.Millisecond),
	}, nil
}
