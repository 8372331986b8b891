package rawjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// objectMembers collects what Object walks: names, raw names and values.
func objectMembers(raw []byte) (names []string, rawNames, values []string, err error) {
	err = Object(raw, func(name, rawName, value []byte) error {
		names = append(names, string(name))
		rawNames = append(rawNames, string(rawName))
		values = append(values, string(value))
		return nil
	})
	return names, rawNames, values, err
}

func TestObject(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in       string
		names    []string
		rawNames []string
		values   []string
	}{
		{`{}`, nil, nil, nil},
		{` { } `, nil, nil, nil},
		{`{"a":1}`, []string{"a"}, []string{`"a"`}, []string{`1`}},
		{`{"a": "x,}]", "b" : [1, {"c": "]"}], "d":{"e":null},"f":true}`,
			[]string{"a", "b", "d", "f"}, []string{`"a"`, `"b"`, `"d"`, `"f"`},
			[]string{`"x,}]"`, `[1, {"c": "]"}]`, `{"e":null}`, `true`}},
		{`{"a\"b\u0041":"q\"\\"}`, []string{`a"bA`}, []string{`"a\"b\u0041"`}, []string{`"q\"\\"`}},
		{`{"a":1,"a":2}`, []string{"a", "a"}, []string{`"a"`, `"a"`}, []string{`1`, `2`}},
	} {
		names, rawNames, values, err := objectMembers([]byte(c.in))
		if err != nil || !reflect.DeepEqual(names, c.names) || !reflect.DeepEqual(rawNames, c.rawNames) || !reflect.DeepEqual(values, c.values) {
			t.Errorf("%s: got %q %q %q %v, want %q %q %q", c.in, names, rawNames, values, err, c.names, c.rawNames, c.values)
		}
	}
	for _, in := range []string{``, `[]`, `"a"`, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":1 "b":2}`, `{"a":[1}`, `{"a":{]}`,
		`{"a":1}x`, `{"a":"x}`, `{1:2}`, `{"a":1]`, `{} {}`} {
		if _, _, _, err := objectMembers([]byte(in)); !errors.Is(err, ErrSyntax) {
			t.Errorf("%q: got %v, want ErrSyntax", in, err)
		}
	}
	stop := errors.New("stop")
	calls := 0
	err := Object([]byte(`{"a":1,"b":2}`), func(_, _, _ []byte) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("f's error: got %v after %d calls, want it after 1", err, calls)
	}
}

func TestArray(t *testing.T) {
	t.Parallel()
	var got []string
	err := Array([]byte(` [1, "a]", {"b":[2]}, [], null ] `), func(v []byte) error { got = append(got, string(v)); return nil })
	if want := []string{`1`, `"a]"`, `{"b":[2]}`, `[]`, `null`}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("got %q %v, want %q", got, err, want)
	}
	for _, in := range []string{`{}`, `[`, `[1,]`, `[1 2]`, `[}`, `[[1]`} {
		if err := Array([]byte(in), func([]byte) error { return nil }); !errors.Is(err, ErrSyntax) {
			t.Errorf("%q: got %v, want ErrSyntax", in, err)
		}
	}
}

// FuzzObject: on every valid JSON object, Object walks exactly the members
// encoding/json decodes, names and values alike.
func FuzzObject(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1}`, `{"a":"}","b":[{"c":"]"}],"d":{}}`, `{"\u00e9\"":[1,2,{"x":null}]}`, `{"a":1,"a":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var want map[string]json.RawMessage
		if !json.Valid(raw) || json.Unmarshal(raw, &want) != nil || want == nil {
			return
		}
		got := map[string][]byte{}
		err := Object(raw, func(name, rawName, value []byte) error {
			var unquoted string
			if json.Unmarshal(rawName, &unquoted) != nil || unquoted != string(name) {
				t.Errorf("raw name %s does not decode to %q", rawName, name)
			}
			got[string(name)] = value // the last of a repeated name wins, as in encoding/json
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: got %d members, want %d", raw, len(got), len(want))
		}
		for name, w := range want {
			if !bytes.Equal(got[name], bytes.TrimSpace(w)) {
				t.Errorf("%s: member %q: got %s, want %s", raw, name, got[name], w)
			}
		}
	})
}
