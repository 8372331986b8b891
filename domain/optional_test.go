package domain

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestOptionalTellsAbsentNullAndValueApart(t *testing.T) {
	t.Parallel()
	tests := []struct {
		body string
		want Optional[string]
	}{
		{body: `{}`, want: Optional[string]{}},
		{body: `{"firstName":null}`, want: Null[string]()},
		{body: `{"firstName":""}`, want: Some("")},
		{body: `{"firstName":"Ann"}`, want: Some("Ann")},
	}
	for _, tt := range tests {
		p := mustBody[UserPatch](t, tt.body)
		if p.FirstName != tt.want {
			t.Errorf("%s: got %+v, want %+v", tt.body, p.FirstName, tt.want)
		}
	}
}

func TestPatchDecodingIsStrict(t *testing.T) {
	t.Parallel()
	for _, body := range []string{
		`{"firstName":1}`,
		`{"nationality":"KEN"}`,
		`{"isVerified":"true"}`,
		`{"business":{"companyName":"A","type":"LIMITED","vat":"1"}}`,
		`{"business":{"registeredAddress":{"line1":"1","zip":"2"}}}`,
		`{"businessPersons":[{"types":["ubo"],"person":{"firstName":"A","middleName":"B"}}]}`,
		`{"businessPersons":[{"types":["ubo"],"ownership":"50"}]}`,
		`{"name":"x"}`,
		`{"email":"a@example.com"}`,
	} {
		var p UserPatch
		if err := strictUnmarshal([]byte(body), &p); err == nil {
			t.Errorf("%s: got nil, want a decoding error", body)
		}
	}
	for _, body := range []string{`{"address":{"line1":"1","postcode":"2"}}`, `{"isVerified":true}`, `{"defaultMomoAccountId":null}`} {
		var p ProfilePatch
		if err := strictUnmarshal([]byte(body), &p); err == nil {
			t.Errorf("%s: got nil, want a decoding error", body)
		}
	}
}

func TestOptionalMarshal(t *testing.T) {
	t.Parallel()
	v := struct {
		A Optional[int] `json:"a,omitzero"`
		B Optional[int] `json:"b"`
		C Optional[int] `json:"c"`
	}{B: Null[int](), C: Some(3)}
	got, err := json.Marshal(v)
	if err != nil || string(got) != `{"b":null,"c":3}` {
		t.Errorf("got %s, %v, want {\"b\":null,\"c\":3}", got, err)
	}
}

func strictUnmarshal(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
