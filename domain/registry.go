package domain

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// EventDef describes one event type of the public event contract
// (docs/events.md is generated from these).
type EventDef struct {
	Type    string       // "user.created"
	Version int          // schema version; the CloudEvents type ends in ".v<Version>"
	New     func() Event // a pointer to a zero value to decode into
	Doc     string       // one sentence for the event catalogue

	// Upcasters turn stored data of schema version N into version N+1, so
	// a .v2 can be introduced without rewriting history: DecodeEvent and
	// PublicData run the chain from the stored version up to Version.
	Upcasters map[int]func(json.RawMessage) (json.RawMessage, error)

	// Private lists the data members withheld from the NATS publication
	// (contract §9): "email" for a top-level member, "a.b" inside an
	// object, "a[].b" inside every element of an array. register derives
	// it from the struct's ledger tags (see Personal); never set it by hand.
	Private []string

	withheld withheld // Private as a tree, what PublicData applies
}

// The annotations of an event's struct fields, as `ledger:"personal"`.
// An annotated field is stored (auditors need it) and left out of the
// published data, wherever it sits: at the top level, in an embedded
// struct (whose members are top-level members), inside a nested object, or
// inside every element of an array. Annotating an object or an array
// withholds all of it.
const (
	// Personal marks personal data (contract §9): names, dob, document
	// numbers, addresses, phone numbers, emails, account numbers, Lightning
	// addresses, file names and free text that may name people.
	Personal = "personal"
	// Secret marks credentials: webhook secrets, API key secret hashes.
	Secret = "secret"
)

// registry maps event types to their definitions. The package has one,
// eventTypes; tests build their own so that test-only types never reach it.
type registry map[string]EventDef

var eventTypes = registry{}

// register adds def to the registry; called from the var blocks of each
// aggregate file. It panics on a definition the contract cannot hold: a
// duplicate type, a bad ledger tag, a hand-written Private list.
func register(def EventDef) EventDef {
	return eventTypes.add(def)
}

// add checks def, derives its withheld fields from the ledger tags of the
// struct def.New returns, and stores it.
func (r registry) add(def EventDef) EventDef {
	fail := func(format string, args ...any) {
		panic(fmt.Sprintf("domain: event type %s: ", def.Type) + fmt.Sprintf(format, args...))
	}
	if _, dup := r[def.Type]; dup {
		fail("registered twice")
	}
	if def.Version < 1 || def.New == nil {
		fail("needs a Version from 1 and New")
	}
	if def.Private != nil {
		fail("Private is derived from the struct's ledger tags, not listed")
	}
	for v := range def.Upcasters {
		if v < 1 || v >= def.Version {
			fail("upcaster from version %d: want one from 1 to %d", v, def.Version-1)
		}
	}
	e := def.New()
	if e.EventType() != def.Type {
		fail("New returns a %s", e.EventType())
	}
	t := reflect.TypeOf(e)
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct || opaque(t.Elem()) {
		fail("New must return a pointer to a struct that encoding/json writes member by member, not %s", t)
	}
	w, paths, err := withheldIn(t.Elem(), "", map[reflect.Type]bool{})
	if err != nil {
		fail("%v", err)
	}
	def.withheld, def.Private = w, paths
	r[def.Type] = def
	return def
}

// EventDefs returns every registered event type, sorted by name.
func EventDefs() []EventDef {
	return eventTypes.defs()
}

func (r registry) defs() []EventDef {
	defs := make([]EventDef, 0, len(r))
	for _, d := range r {
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

// DecodeEvent turns stored data of a schema version into its typed event,
// upcasting older versions to the registered one first. A version above
// the registered one, or a missing upcaster, is an error.
func DecodeEvent(eventType string, version int, data []byte) (Event, error) {
	return eventTypes.decode(eventType, version, data)
}

func (r registry) decode(eventType string, version int, data []byte) (Event, error) {
	def, ok := r[eventType]
	if !ok {
		return nil, fmt.Errorf("unknown event type %q", eventType)
	}
	data, err := def.upcast(version, data)
	if err != nil {
		return nil, err
	}
	e := def.New()
	if err := unmarshal(data, e); err != nil {
		return nil, fmt.Errorf("decode %s: %w", eventType, err)
	}
	return derefEvent(e), nil
}

// upcast runs data of schema version through the upcasters up to
// d.Version.
func (d EventDef) upcast(version int, data json.RawMessage) (json.RawMessage, error) {
	if version < 1 || version > d.Version {
		return nil, fmt.Errorf("event %s has schema version %d, want 1 to %d", d.Type, version, d.Version)
	}
	for v := version; v < d.Version; v++ {
		up, ok := d.Upcasters[v]
		if !ok {
			return nil, fmt.Errorf("event %s: no upcaster from schema version %d to %d", d.Type, v, v+1)
		}
		var err error
		if data, err = up(data); err != nil {
			return nil, fmt.Errorf("upcast %s from schema version %d: %w", d.Type, v, err)
		}
	}
	return data, nil
}

// publicData returns data of schema version (0: d.Version) upcast to
// d.Version, without its withheld members.
func (d EventDef) publicData(version int, data json.RawMessage) (json.RawMessage, error) {
	if version != 0 {
		var err error
		if data, err = d.upcast(version, data); err != nil {
			return nil, err
		}
	}
	public, err := d.withheld.apply(data)
	if err != nil {
		return nil, fmt.Errorf("decode data of %s: %w", d.Type, err)
	}
	return public, nil
}

// derefEvent turns the *T that EventDef.New returned into the T the Apply
// switches match on.
func derefEvent(e Event) Event {
	return reflect.ValueOf(e).Elem().Interface().(Event)
}

// withheld is what to leave out of a JSON value: for an object, its members
// named here, whole (nil) or the parts the subtree names; for an array, the
// same in each element.
type withheld map[string]*withheld

// apply returns raw without the withheld members; the others keep their
// order and bytes. raw is stored event data, valid JSON.
func (w withheld) apply(raw json.RawMessage) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(w) == 0 || len(raw) == 0 || (raw[0] != '{' && raw[0] != '[') {
		return raw, nil
	}
	dec := jsontext.NewDecoder(bytes.NewBuffer(raw), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	return w.filter(dec, make([]byte, 0, len(raw)), new([]byte))
}

// filter appends the object or array dec is at to out, without the
// withheld members. key is room to unquote a member's name in.
func (w withheld) filter(dec *jsontext.Decoder, out []byte, key *[]byte) ([]byte, error) {
	start, err := dec.ReadToken()
	if err != nil {
		return nil, err
	}
	out = append(out, byte(start.Kind()))
	first := true
	for kind := dec.PeekKind(); kind != '}' && kind != ']'; kind = dec.PeekKind() {
		rule, name := &w, jsontext.Value(nil) // an array's elements are objects of the same shape
		if start.Kind() == '{' {
			if name, err = dec.ReadValue(); err != nil {
				return nil, err
			}
			// The decoder has read name, so the only error left is invalid
			// UTF-8, replaced by U+FFFD as encoding/json's decoder reads it.
			*key, _ = jsontext.AppendUnquote((*key)[:0], name)
			var found bool
			if rule, found = w.lookup(string(*key)); found && rule == nil {
				if err := dec.SkipValue(); err != nil { // withheld whole
					return nil, err
				}
				continue
			}
		}
		if !first {
			out = append(out, ',')
		}
		first = false
		if name != nil {
			out = append(append(out, name...), ':')
		}
		if rule != nil && (dec.PeekKind() == '{' || dec.PeekKind() == '[') {
			if out, err = rule.filter(dec, out, key); err != nil {
				return nil, err
			}
			continue
		}
		value, err := dec.ReadValue()
		if err != nil {
			return nil, err
		}
		out = append(out, value...)
	}
	end, err := dec.ReadToken()
	if err != nil {
		return nil, err
	}
	return append(out, byte(end.Kind())), nil
}

// lookup finds the rule of an object member. Like encoding/json's decoder,
// it matches names case-insensitively, so no spelling of a member slips out.
func (w withheld) lookup(key string) (*withheld, bool) {
	if rule, ok := w[key]; ok {
		return rule, true
	}
	for name, rule := range w {
		if strings.EqualFold(name, key) {
			return rule, true
		}
	}
	return nil, false
}

// withheldIn returns the annotated members of values of type t, as a tree
// and as paths ("a.b", "a[].b") within at, the path of the value itself.
// seen guards against recursive types.
func withheldIn(t reflect.Type, at string, seen map[reflect.Type]bool) (withheld, []string, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case opaque(t) || seen[t]:
		return nil, nil, nil
	case t.Kind() == reflect.Slice || t.Kind() == reflect.Array:
		return withheldIn(t.Elem(), at+"[]", seen)
	case t.Kind() == reflect.Map:
		if w, _, err := withheldIn(t.Elem(), at, seen); err != nil || len(w) > 0 {
			return nil, nil, fmt.Errorf("%s: ledger tags inside map values are not supported", at)
		}
		return nil, nil, nil
	case t.Kind() != reflect.Struct:
		return nil, nil, nil
	}
	seen[t] = true
	defer delete(seen, t)
	ms, err := members(t)
	if err != nil {
		return nil, nil, err
	}
	w := withheld{}
	var paths []string
	for _, m := range ms {
		path := m.name
		if at != "" {
			path = at + "." + m.name
		}
		if m.class != "" {
			w[m.name] = nil
			paths = append(paths, path)
			continue
		}
		sub, subPaths, err := withheldIn(m.typ, path, seen)
		if err != nil {
			return nil, nil, err
		}
		if len(sub) > 0 {
			w[m.name] = &sub
			paths = append(paths, subPaths...)
		}
	}
	return w, paths, nil
}

// member is one JSON member of a struct, as encoding/json writes it.
type member struct {
	name      string
	typ       reflect.Type
	class     string // "", Personal or Secret
	omitempty bool
}

// members lists the JSON members of struct type t in field order, those of
// untagged embedded structs in their place (as encoding/json promotes
// them). An annotation on an embedded struct applies to each of its
// members.
func members(t reflect.Type) ([]member, error) {
	var ms []member
	seen := map[string]bool{}
	var walk func(t reflect.Type, class string) error
	walk = func(t reflect.Type, inherited string) error {
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			class := f.Tag.Get("ledger")
			if class != "" && class != Personal && class != Secret {
				return fmt.Errorf("field %s: ledger tag %q: want %q or %q", f.Name, class, Personal, Secret)
			}
			if class == "" {
				class = inherited
			}
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
				if err := walk(ft, class); err != nil {
					return err
				}
				continue
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if seen[name] {
				return fmt.Errorf("JSON member %q appears twice in %s", name, t)
			}
			seen[name] = true
			ms = append(ms, member{name: name, typ: f.Type, class: class,
				omitempty: strings.Contains(","+opts+",", ",omitempty,")})
		}
		return nil
	}
	return ms, walk(t, "")
}

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// opaque reports whether values of t write their own JSON (uuid, decimal,
// time, json.RawMessage) or are bytes (base64): leaves without members.
func opaque(t reflect.Type) bool {
	if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 {
		return true
	}
	for _, m := range []reflect.Type{jsonMarshaler, textMarshaler} {
		if t.Implements(m) || reflect.PointerTo(t).Implements(m) {
			return true
		}
	}
	return false
}
