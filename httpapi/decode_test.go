package httpapi

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ledger/ledger/domain"
)

type decodeTarget struct {
	APIKey string         `json:"apiKey"`
	Count  int            `json:"count"`
	Owner  *decodePerson  `json:"owner"`
	People []decodePerson `json:"people"`
	// PATCH bodies wrap their fields in domain.Optional, which decodes itself.
	Patch domain.Optional[decodePerson]   `json:"patch"`
	Many  domain.Optional[[]decodePerson] `json:"many"`
}

type decodePerson struct {
	FirstName string `json:"firstName"`
}

func TestDecode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		contentType string
		body        string
		wantKind    domain.Kind
		wantCode    string
		wantField   string
	}{
		{name: "valid", contentType: "application/json", body: `{"apiKey":"k","count":2}`},
		{name: "charset parameter", contentType: "application/json; charset=utf-8", body: `{"apiKey":"k"}`},
		{name: "wrong content type", contentType: "text/plain", body: `{}`, wantKind: domain.Unsupported, wantCode: "unsupported_media_type"},
		{name: "no content type", body: `{}`, wantKind: domain.Unsupported, wantCode: "unsupported_media_type"},
		{name: "malformed", contentType: "application/json", body: `{"apiKey":`, wantKind: domain.Invalid, wantCode: "malformed_json"},
		{name: "empty", contentType: "application/json", body: ``, wantKind: domain.Invalid, wantCode: "malformed_json"},
		{name: "unknown field", contentType: "application/json", body: `{"nope":1}`, wantKind: domain.Invalid, wantCode: "unknown_field", wantField: "nope"},
		{name: "wrong type", contentType: "application/json", body: `{"count":"x"}`, wantKind: domain.Invalid, wantCode: "validation_failed", wantField: "count"},
		{name: "array body", contentType: "application/json", body: `[1]`, wantKind: domain.Invalid, wantCode: "malformed_json"},
		{name: "trailing garbage", contentType: "application/json", body: `{"apiKey":"k"} x`, wantKind: domain.Invalid, wantCode: "malformed_json"},
		{name: "two objects", contentType: "application/json", body: `{} {}`, wantKind: domain.Invalid, wantCode: "malformed_json"},
		{name: "nested", contentType: "application/json", body: `{"owner":{"firstName":"a"},"people":[{"firstName":"b"}]}`},
		{name: "field in the wrong case", contentType: "application/json", body: `{"apikey":"k"}`, wantKind: domain.Invalid, wantCode: "unknown_field", wantField: "apikey"},
		{name: "wrong case after the right one", contentType: "application/json", body: `{"apiKey":"k","APIKEY":"x"}`, wantKind: domain.Invalid, wantCode: "unknown_field", wantField: "APIKEY"},
		{name: "nested field in the wrong case", contentType: "application/json", body: `{"owner":{"firstname":"a"}}`, wantKind: domain.Invalid, wantCode: "unknown_field", wantField: "owner.firstname"},
		{name: "array element field in the wrong case", contentType: "application/json", body: `{"people":[{"firstName":"a"},{"FirstName":"b"}]}`,
			wantKind: domain.Invalid, wantCode: "unknown_field", wantField: "people[1].FirstName"},
		{name: "wrong type in an array element", contentType: "application/json", body: `{"people":[{"firstName":"a"},{"firstName":1}]}`,
			wantKind: domain.Invalid, wantCode: "validation_failed", wantField: "people[1].firstName"},
		{name: "wrong type in an optional array element", contentType: "application/json", body: `{"many":[{"firstName":"a"},{"firstName":1}]}`,
			wantKind: domain.Invalid, wantCode: "validation_failed", wantField: "many[1].firstName"},
		{name: "nested unknown field", contentType: "application/json", body: `{"owner":{"nope":1}}`, wantKind: domain.Invalid, wantCode: "unknown_field", wantField: "owner.nope"},
		{name: "optional nested", contentType: "application/json", body: `{"patch":{"firstName":"a"},"many":[{"firstName":"b"}]}`},
		{name: "optional null", contentType: "application/json", body: `{"patch":null,"many":null}`},
		{name: "optional nested unknown field", contentType: "application/json", body: `{"patch":{"firstName":"a","nope":1}}`,
			wantKind: domain.Invalid, wantCode: "unknown_field", wantField: "patch.nope"},
		{name: "optional nested field in the wrong case", contentType: "application/json", body: `{"patch":{"firstname":"a"}}`,
			wantKind: domain.Invalid, wantCode: "unknown_field", wantField: "patch.firstname"},
		{name: "optional array element field in the wrong case", contentType: "application/json", body: `{"many":[{"firstName":"a"},{"FirstName":"b"}]}`,
			wantKind: domain.Invalid, wantCode: "unknown_field", wantField: "many[1].FirstName"},
		// encoding/json would store U+FFFD in place of these without a word.
		{name: "invalid UTF-8", contentType: "application/json", body: "{\"apiKey\":\"Cafe\xC3\"}", wantKind: domain.Invalid, wantCode: "malformed_json"},
		{name: "lone high surrogate", contentType: "application/json", body: `{"apiKey":"\ud800"}`, wantKind: domain.Invalid, wantCode: "malformed_json"},
		{name: "high surrogate then not a low one", contentType: "application/json", body: `{"apiKey":"\ud800\u0041"}`, wantKind: domain.Invalid, wantCode: "malformed_json"},
		{name: "lone low surrogate", contentType: "application/json", body: `{"apiKey":"\udc00"}`, wantKind: domain.Invalid, wantCode: "malformed_json"},
		{name: "surrogate pair", contentType: "application/json", body: `{"apiKey":"\ud83d\ude00"}`},
		{name: "escaped backslash before u", contentType: "application/json", body: `{"apiKey":"\\ud800"}`},
		{name: "U+FFFD sent as such", contentType: "application/json", body: `{"apiKey":"\ufffd` + "\uFFFD ï¿½" + `"}`},
		// I-JSON (RFC 7493): encoding/json would keep the last of two members of one name.
		{name: "member twice", contentType: "application/json", body: `{"apiKey":"a","apiKey":"b"}`,
			wantKind: domain.Invalid, wantCode: "malformed_json", wantField: "apiKey"},
		{name: "member twice, once escaped", contentType: "application/json", body: `{"count":1,"c\u006funt":2}`,
			wantKind: domain.Invalid, wantCode: "malformed_json", wantField: "count"},
		{name: "nested member twice", contentType: "application/json", body: `{"people":[{"firstName":"a"},{"firstName":"b","firstName":"c"}]}`,
			wantKind: domain.Invalid, wantCode: "malformed_json", wantField: "people[1].firstName"},
		{name: "member twice in an optional", contentType: "application/json", body: `{"patch":{"firstName":"a","firstName":"a"}}`,
			wantKind: domain.Invalid, wantCode: "malformed_json", wantField: "patch.firstName"},
		{name: "member twice in a nested object", contentType: "application/json", body: `{"owner":{"firstName":"a","firstName":"b"}}`,
			wantKind: domain.Invalid, wantCode: "malformed_json", wantField: "owner.firstName"},
		{name: "member twice after an unterminated body", contentType: "application/json", body: `{"apiKey":"a","apiKey"`,
			wantKind: domain.Invalid, wantCode: "malformed_json"},
		{name: "one name in two objects", contentType: "application/json", body: `{"owner":{"firstName":"a"},"people":[{"firstName":"a"},{"firstName":"b"}]}`},
		{name: "exactly 1 MiB", contentType: "application/json", body: strings.Repeat(" ", maxJSONBody-len(`{"apiKey":"k"}`)) + `{"apiKey":"k"}`},
		{name: "over 1 MiB", contentType: "application/json", body: `{"apiKey":"` + strings.Repeat("a", maxJSONBody) + `"}`,
			wantKind: domain.TooLarge, wantCode: "body_too_large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(tt.body))
			if tt.contentType != "" {
				r.Header.Set("Content-Type", tt.contentType)
			}
			var v decodeTarget
			err := decode(httptest.NewRecorder(), r, &v)
			if tt.wantCode == "" {
				if err != nil {
					t.Fatalf("got %v, want nil", err)
				}
				return
			}
			var de *domain.Error
			if !errors.As(err, &de) || de.Kind != tt.wantKind || de.Code != tt.wantCode {
				t.Fatalf("got %v, want kind %d code %s", err, tt.wantKind, tt.wantCode)
			}
			if tt.wantField != "" && (len(de.Fields) != 1 || de.Fields[0].Field != tt.wantField) {
				t.Errorf("got fields %+v, want %s", de.Fields, tt.wantField)
			}
		})
	}
}

// TestDecodeNamesEmptyMember: a member named "" is reported as itself.
// It once ended the name check, so a nested unknown member further on was
// reported by the decoder without its path ("nope", not "patch.nope").
func TestDecodeNamesEmptyMember(t *testing.T) {
	t.Parallel()
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"":1,"patch":{"nope":1}}`))
	r.Header.Set("Content-Type", "application/json")
	var v decodeTarget
	var de *domain.Error
	if err := decode(httptest.NewRecorder(), r, &v); !errors.As(err, &de) || de.Code != "unknown_field" ||
		len(de.Fields) != 1 || de.Fields[0].Field != "" {
		t.Fatalf("got %v, want unknown_field naming the member \"\"", err)
	}
}

// FuzzDecode checks that any body either decodes or yields a client error
// (never an internal one, never a panic).
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{`{"apiKey":"k","count":1}`, `{`, `[]`, `{"count":1e400}`, `{"apiKey":"\ud800"}`, "{} \x00", `null`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		var v decodeTarget
		err := decode(httptest.NewRecorder(), r, &v)
		if err != nil && domain.ErrorKind(err) == domain.Internal {
			t.Fatalf("body %q: got internal error %v", body, err)
		}
		// Accepted text decodes as sent: a U+FFFD in a decoded string is
		// one the body holds, never one encoding/json put in its place.
		if err == nil && strings.Contains(v.APIKey, "\uFFFD") && !bytes.Contains(body, []byte("\uFFFD")) &&
			!bytes.Contains(bytes.ToLower(body), []byte(`\ufffd`)) {
			t.Fatalf("body %q: decoded apiKey %q holds a U+FFFD the body does not", body, v.APIKey)
		}
	})
}
