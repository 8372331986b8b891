package domain

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

var update = flag.Bool("update", false, "rewrite docs/events.md from the code")

// catalogueFile is docs/events.md, relative to this package.
const catalogueFile = "../docs/events.md"

// TestEventCatalogue keeps docs/events.md, the public event contract, in
// step with the event structs; -update rewrites it.
func TestEventCatalogue(t *testing.T) {
	got, err := Catalogue()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.MkdirAll(filepath.Dir(catalogueFile), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(catalogueFile, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(catalogueFile)
	if err != nil {
		t.Fatalf("docs/events.md is stale: run go test ./domain -run TestEventCatalogue -update (%v)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("docs/events.md is stale: run go test ./domain -run TestEventCatalogue -update\n%s", firstDifference(want, got))
	}
}

// firstDifference describes the first line where the file and the code differ.
func firstDifference(file, code []byte) string {
	a, b := strings.Split(string(file), "\n"), strings.Split(string(code), "\n")
	for i := range max(len(a), len(b)) {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			return fmt.Sprintf("line %d:\n  file: %s\n  code: %s", i+1, x, y)
		}
	}
	return ""
}

func TestCatalogueHasEveryEventType(t *testing.T) {
	t.Parallel()
	doc, err := Catalogue()
	if err != nil {
		t.Fatal(err)
	}
	for _, def := range EventDefs() {
		aggregate, name, _ := strings.Cut(def.Type, ".")
		for _, want := range []string{
			"\n## " + CloudEventType(def.Type, def.Version) + "\n\n" + def.Doc + "\n",
			fmt.Sprintf("`ledger.<tenantId>.%s.<%sId>.%s`", aggregate, aggregate, name),
		} {
			if !bytes.Contains(doc, []byte(want)) {
				t.Errorf("%s: catalogue lacks %q", def.Type, want)
			}
		}
	}
}

// marker is a unique value put in one string of an event.
type marker struct {
	value    string
	path     string // the member's path as the catalogue spells it: "a.b", "a[].b"
	withheld bool   // it or an enclosing member has a ledger tag
}

// fillMarkers puts a unique marker in every string inside v (and a JSON
// object holding one in every json.RawMessage), two elements in every
// slice, and records each marker with whether the ledger tags on its way
// withhold it. It reads the tags itself, not through register, so that it
// checks the registry's reading of them.
func fillMarkers(t *testing.T, v reflect.Value, path string, withheld bool, ms *[]marker) {
	t.Helper()
	next := func() string {
		m := marker{value: fmt.Sprintf("mark%04dx", len(*ms)), path: path, withheld: withheld}
		*ms = append(*ms, m)
		return m.value
	}
	switch {
	case v.Type() == reflect.TypeFor[json.RawMessage]():
		v.SetBytes([]byte(`{"note":"` + next() + `"}`))
		return
	case opaque(v.Type()):
		return // uuid, decimal, time: no strings inside
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(next())
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fillMarkers(t, v.Elem(), path, withheld, ms)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			fillMarkers(t, v.Index(i), path+"[]", withheld, ms)
		}
	case reflect.Map, reflect.Interface, reflect.Array:
		t.Fatalf("%s: a %s in an event: teach fillMarkers to fill it", path, v.Type())
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" || (!f.IsExported() && !f.Anonymous) {
				continue
			}
			w := withheld || f.Tag.Get("ledger") != ""
			if f.Anonymous && name == "" {
				fillMarkers(t, v.Field(i), path, w, ms) // promoted: its members are this object's
				continue
			}
			if name == "" {
				name = f.Name
			}
			p := name
			if path != "" {
				p = path + "." + name
			}
			fillMarkers(t, v.Field(i), p, w, ms)
		}
	}
}

// TestPublishedEventsCarryNoAnnotatedField scans every event type: with a
// marker in every string, the published data holds none of the annotated
// members' markers (no leak) and all of the others' (no over-stripping),
// the store keeps them all, and the catalogue entry marks exactly the
// withheld members personal or secret.
func TestPublishedEventsCarryNoAnnotatedField(t *testing.T) {
	t.Parallel()
	defs := EventDefs()
	if len(defs) < 20 {
		t.Fatalf("got %d event types, want every registered one", len(defs))
	}
	for _, def := range defs {
		t.Run(def.Type, func(t *testing.T) {
			t.Parallel()
			e := def.New()
			var ms []marker
			fillMarkers(t, reflect.ValueOf(e).Elem(), "", false, &ms)
			aggregate, _, _ := strings.Cut(def.Type, ".")
			rec, err := NewRecord(StreamRef{TenantID: uuid.New(), Type: aggregate, ID: uuid.New()}, 1, derefEvent(e),
				Metadata{}, uuid.New(), time.Now())
			if err != nil {
				t.Fatal(err)
			}
			public, err := PublicData(rec)
			if err != nil {
				t.Fatal(err)
			}
			if !json.Valid(public) {
				t.Fatalf("published data is not JSON: %s", public)
			}
			rows := map[string]string{}
			for _, row := range fieldRows(reflect.TypeOf(e).Elem(), "", "", map[reflect.Type]bool{}) {
				rows[row.path] = row.class
			}
			for _, m := range ms {
				if !strings.Contains(string(rec.Data), m.value) {
					t.Errorf("%s: stored data lacks it: %s", m.path, rec.Data)
				}
				if published := strings.Contains(string(public), m.value); published == m.withheld {
					t.Errorf("%s (withheld %v): published %v, want %v: %s", m.path, m.withheld, published, !m.withheld, public)
				}
				class, ok := rows[strings.TrimSuffix(m.path, "[]")]
				if !ok {
					t.Errorf("%s: not in the catalogue's field table", m.path)
				} else if (class != "published") != m.withheld {
					t.Errorf("%s: catalogue says %s, want withheld %v", m.path, class, m.withheld)
				}
			}
		})
	}
}

// The test-only types of TestPublicDataWithholdsAtAnyDepth.
type (
	depthContact struct {
		Email string `json:"email" ledger:"personal"`
		Kind  string `json:"kind"`
	}
	depthEmbedded struct {
		Phone string `json:"phone" ledger:"personal"`
		Plan  string `json:"plan"`
	}
	depthEvent struct {
		ID       string           `json:"id"`
		Contact  depthContact     `json:"contact"`
		Contacts []depthContact   `json:"contacts"`
		Ptr      *depthContact    `json:"ptr"`
		Grid     [][]depthContact `json:"grid"`
		Whole    *depthContact    `json:"whole" ledger:"personal"`
		Token    string           `json:"token" ledger:"secret"`
		Skipped  string           `json:"-" ledger:"personal"`
		depthEmbedded
	}
)

func (depthEvent) EventType() string { return "test.depth" }

func TestPublicDataWithholdsAtAnyDepth(t *testing.T) {
	t.Parallel()
	def := registry{}.add(EventDef{Type: "test.depth", Version: 1, New: func() Event { return new(depthEvent) }})
	wantPrivate := []string{"contact.email", "contacts[].email", "ptr.email", "grid[][].email", "whole", "token", "phone"}
	if !slices.Equal(def.Private, wantPrivate) {
		t.Errorf("Private: got %v, want %v", def.Private, wantPrivate)
	}
	c := func(email string) depthContact { return depthContact{Email: email, Kind: "k-" + email} }
	data, err := json.Marshal(depthEvent{ID: "id1", Contact: c("e1"), Contacts: []depthContact{c("e2"), c("e3")},
		Ptr: ptr(c("e4")), Grid: [][]depthContact{{c("e5")}, {c("e6"), c("e7")}}, Whole: ptr(c("e8")), Token: "e9",
		depthEmbedded: depthEmbedded{Phone: "e10", Plan: "gold"}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := def.publicData(1, data)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"id1","contact":{"kind":"k-e1"},"contacts":[{"kind":"k-e2"},{"kind":"k-e3"}],"ptr":{"kind":"k-e4"},` +
		`"grid":[[{"kind":"k-e5"}],[{"kind":"k-e6"},{"kind":"k-e7"}]],"plan":"gold"}`
	if string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}

	for _, tc := range []struct{ in, want string }{
		{`{"id":"a","contact":null,"contacts":null,"ptr":null,"grid":[],"whole":null}`, `{"id":"a","contact":null,"contacts":null,"ptr":null,"grid":[]}`},
		{` { "TOKEN" : "x", "Contact" : { "Email" : "y", "kind" : "z" } } `, `{"Contact":{"kind":"z"}}`}, // matched as the decoder matches: ignoring case
		{`{"grid":[[null,{"email":"y"}]]}`, `{"grid":[[null,{}]]}`},
		{`{}`, `{}`},
	} {
		got, err := def.publicData(0, json.RawMessage(tc.in))
		if err != nil || string(got) != tc.want {
			t.Errorf("%s: got %s (%v), want %s", tc.in, got, err, tc.want)
		}
	}
	if _, err := def.publicData(1, json.RawMessage(`{"contact":{"email":`)); err == nil {
		t.Error("got nil, want an error for truncated data")
	}
}

// The test-only types of TestRegisterRefusesBadAnnotations.
type (
	badTagEvent struct {
		Name string `json:"name" ledger:"persnal"`
	}
	mapEvent struct {
		ByKey map[string]depthContact `json:"byKey"`
	}
)

func (badTagEvent) EventType() string { return "test.bad_tag" }
func (mapEvent) EventType() string    { return "test.map" }

func TestRegisterRefusesBadAnnotations(t *testing.T) {
	t.Parallel()
	for _, def := range []EventDef{
		{Type: "test.bad_tag", Version: 1, New: func() Event { return new(badTagEvent) }},
		{Type: "test.map", Version: 1, New: func() Event { return new(mapEvent) }},
		{Type: "test.depth", Version: 1, New: func() Event { return new(depthEvent) }, Private: []string{"id"}},
		{Type: "test.other", Version: 1, New: func() Event { return new(depthEvent) }},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: got no panic, want register to refuse it", def.Type)
				}
			}()
			registry{}.add(def)
		}()
	}
}

func TestPublicDataFailsClosed(t *testing.T) {
	t.Parallel()
	if _, err := PublicData(Record{Type: "nope.created", Data: []byte(`{"email":"a@b.example"}`)}); err == nil {
		t.Error("unregistered type: got nil, want an error")
	}
	if _, err := PublicData(Record{Type: "user.created", SchemaVersion: 2, Data: []byte(`{"email":"a@b.example"}`)}); err == nil {
		t.Error("schema version above the registered one: got nil, want an error")
	}
}
