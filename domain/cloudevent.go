package domain

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// CloudEvent is the public envelope of an event, stored and published
// (CloudEvents 1.0 structured JSON, contract §9). Extension attributes are
// lower-case alphanumeric as CloudEvents requires.
type CloudEvent struct {
	SpecVersion     string          `json:"specversion"`
	ID              string          `json:"id"`
	Source          string          `json:"source"`
	Type            string          `json:"type"`
	Subject         string          `json:"subject"`
	Time            string          `json:"time"`
	DataContentType string          `json:"datacontenttype"`
	Data            json.RawMessage `json:"data"`
	TenantID        string          `json:"tenantid"`
	StreamID        string          `json:"streamid"`
	StreamVersion   int             `json:"streamversion"`
	Position        int64           `json:"position"`
	Actor           string          `json:"actor,omitempty"`
	RequestID       string          `json:"requestid,omitempty"`
	CorrelationID   string          `json:"correlationid,omitempty"`
	CausationID     string          `json:"causationid,omitempty"`
	Hash            string          `json:"hash,omitempty"`
	PrevHash        string          `json:"prevhash,omitempty"`
}

// TimeFormat is how every timestamp of the API and the events is written:
// ISO 8601 UTC with milliseconds.
const TimeFormat = "2006-01-02T15:04:05.000Z"

// Envelope returns the CloudEvent of a stored record, data included as stored.
func Envelope(r Record) CloudEvent {
	return CloudEvent{
		SpecVersion: "1.0", ID: r.ID.String(), Source: "/tenants/" + r.TenantID.String(),
		Type:    CloudEventType(r.Type, r.SchemaVersion),
		Subject: collection(r.StreamType) + "/" + r.StreamID.String(), Time: r.RecordedAt.UTC().Format(TimeFormat),
		DataContentType: "application/json", Data: r.Data,
		TenantID: r.TenantID.String(), StreamID: r.StreamID.String(), StreamVersion: r.StreamVersion,
		Position: r.Position, Actor: r.Meta.Actor, RequestID: r.Meta.RequestID,
		CorrelationID: r.Meta.CorrelationID, CausationID: r.Meta.CausationID,
		Hash: r.Hash, PrevHash: r.PrevHash,
	}
}

// CloudEventType is the public type of an event: "ledger.user.created.v1".
func CloudEventType(eventType string, version int) string {
	return "ledger." + eventType + ".v" + strconv.Itoa(version)
}

// PublicData returns r's data without the members its event type's struct
// annotates personal or secret (the EventDef's Private paths, at any depth):
// what NATS subscribers receive (contract §9). The store keeps them.
//
// Data stored at an older schema version is upcast first, so the
// annotations of the registered struct apply to the shape they describe;
// a SchemaVersion of 0 means the registered one. It fails closed: an
// unregistered type or a schema version above the registered one is an
// error, never published as stored.
func PublicData(r Record) (json.RawMessage, error) {
	def, ok := eventTypes[r.Type]
	if !ok {
		return nil, fmt.Errorf("publish %s: event type %q is not registered", r.ID, r.Type)
	}
	public, err := def.publicData(r.SchemaVersion, r.Data)
	if err != nil {
		return nil, fmt.Errorf("publish %s: %w", r.ID, err)
	}
	return public, nil
}

// collection is the plural of a stream type, the first segment of a
// CloudEvents subject: "payments", and "unmatched_funds" as it is.
func collection(streamType string) string {
	if strings.HasSuffix(streamType, "s") {
		return streamType
	}
	return streamType + "s"
}
