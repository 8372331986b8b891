package domain

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// renamed is a test-only event at schema version 2: v1 called its first
// member "name"; v2 renamed it "fullName".
type renamed struct {
	FullName string `json:"fullName" ledger:"personal"`
	Plan     string `json:"plan"`
}

func (renamed) EventType() string { return "test.renamed" }

// renameName is the upcaster from v1 to v2.
func renameName(data json.RawMessage) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	if name, ok := m["name"]; ok {
		m["fullName"] = name
		delete(m, "name")
	}
	return json.Marshal(m)
}

// renamedRegistry is a registry of its own holding test.renamed, so that
// the package's registry (and the catalogue) never sees it.
func renamedRegistry(version int, upcasters map[int]func(json.RawMessage) (json.RawMessage, error)) registry {
	r := registry{}
	r.add(EventDef{Type: "test.renamed", Version: version, New: func() Event { return new(renamed) },
		Doc: "A test event whose v2 renamed a member.", Upcasters: upcasters})
	return r
}

func TestDecodeEventUpcastsOlderVersions(t *testing.T) {
	t.Parallel()
	r := renamedRegistry(2, map[int]func(json.RawMessage) (json.RawMessage, error){1: renameName})
	want := renamed{FullName: "Ann Smith", Plan: "gold"}
	for _, tc := range []struct {
		version int
		data    string
	}{
		{1, `{"name":"Ann Smith","plan":"gold"}`},
		{2, `{"fullName":"Ann Smith","plan":"gold"}`},
	} {
		got, err := r.decode("test.renamed", tc.version, []byte(tc.data))
		if err != nil {
			t.Fatalf("v%d: %v", tc.version, err)
		}
		if got != want {
			t.Errorf("v%d: got %+v, want %+v", tc.version, got, want)
		}
	}
	for _, version := range []int{0, 3} {
		if _, err := r.decode("test.renamed", version, []byte(`{}`)); err == nil {
			t.Errorf("v%d: got nil, want an error for a version outside 1 to 2", version)
		}
	}
	if _, ok := LookupEvent("test.renamed"); ok {
		t.Error("test.renamed reached the package's registry")
	}
}

func TestPublicDataUpcastsBeforeWithholding(t *testing.T) {
	t.Parallel()
	def := renamedRegistry(2, map[int]func(json.RawMessage) (json.RawMessage, error){1: renameName})["test.renamed"]
	for version, data := range map[int]string{1: `{"name":"Ann Smith","plan":"gold"}`, 2: `{"fullName":"Ann Smith","plan":"gold"}`} {
		got, err := def.publicData(version, json.RawMessage(data))
		if err != nil {
			t.Fatalf("v%d: %v", version, err)
		}
		if strings.Contains(string(got), "Ann") || !strings.Contains(string(got), `"plan":"gold"`) {
			t.Errorf("v%d: got %s, want the plan without the name", version, got)
		}
	}
}

func TestDecodeEventNeedsEveryUpcastStep(t *testing.T) {
	t.Parallel()
	// v3 with the step from v2 only: stored v1 data cannot be read.
	r := renamedRegistry(3, map[int]func(json.RawMessage) (json.RawMessage, error){
		2: func(d json.RawMessage) (json.RawMessage, error) { return d, nil },
	})
	if _, err := r.decode("test.renamed", 1, []byte(`{"name":"A"}`)); err == nil || !strings.Contains(err.Error(), "no upcaster from schema version 1 to 2") {
		t.Errorf("v1: got %v, want the missing step named", err)
	}
	if got, err := r.decode("test.renamed", 2, []byte(`{"fullName":"A"}`)); err != nil || got != (renamed{FullName: "A"}) {
		t.Errorf("v2: got %+v, %v", got, err)
	}

	broken := errors.New("broken")
	r = renamedRegistry(2, map[int]func(json.RawMessage) (json.RawMessage, error){
		1: func(json.RawMessage) (json.RawMessage, error) { return nil, broken },
	})
	if _, err := r.decode("test.renamed", 1, []byte(`{}`)); !errors.Is(err, broken) {
		t.Errorf("got %v, want the upcaster's error", err)
	}
}

func TestRegisterRefusesUpcastersOutsideTheVersions(t *testing.T) {
	t.Parallel()
	for _, from := range []int{0, 2} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("upcaster from v%d of a v2 type: got no panic", from)
				}
			}()
			renamedRegistry(2, map[int]func(json.RawMessage) (json.RawMessage, error){from: renameName})
		}()
	}
}
