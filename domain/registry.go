package domain

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
)

// EventDef describes one event type of the public event contract.
type EventDef struct {
	Type    string       // "user.created"
	Version int          // schema version; the CloudEvents type ends in ".v<Version>"
	New     func() Event // a zero value to decode into
	Private []string     // top-level data fields withheld from the NATS publication (personal data, secrets)
	Doc     string       // one sentence for the event catalogue
}

var eventTypes = map[string]EventDef{}

// register adds def to the registry; called from the var blocks of each aggregate file.
func register(def EventDef) EventDef {
	if _, dup := eventTypes[def.Type]; dup {
		panic("domain: event type registered twice: " + def.Type)
	}
	eventTypes[def.Type] = def
	return def
}

// EventDefs returns every registered event type, sorted by name.
func EventDefs() []EventDef {
	defs := make([]EventDef, 0, len(eventTypes))
	for _, d := range eventTypes {
		defs = append(defs, d)
	}
	sort.Slice(defs, func(i, j int) bool { return defs[i].Type < defs[j].Type })
	return defs
}

// LookupEvent returns the definition of an event type.
func LookupEvent(eventType string) (EventDef, bool) {
	d, ok := eventTypes[eventType]
	return d, ok
}

// DecodeEvent turns stored data into its typed event. A schema version other
// than the registered one is an error until an upcaster for it exists.
func DecodeEvent(eventType string, version int, data []byte) (Event, error) {
	def, ok := eventTypes[eventType]
	if !ok {
		return nil, fmt.Errorf("unknown event type %q", eventType)
	}
	if version != def.Version {
		return nil, fmt.Errorf("event %s has schema version %d, want %d", eventType, version, def.Version)
	}
	e := def.New()
	if err := json.Unmarshal(data, e); err != nil {
		return nil, fmt.Errorf("decode %s: %w", eventType, err)
	}
	return derefEvent(e), nil
}

// derefEvent turns the *T that EventDef.New returned into the T the Apply
// switches match on.
func derefEvent(e Event) Event {
	return reflect.ValueOf(e).Elem().Interface().(Event)
}
