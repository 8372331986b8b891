package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ledger/ledger/domain"
)

// uniqueNames refuses a body whose JSON value has an object with a member
// name twice, at any depth, escapes decoded ({"a":1,"\u0061":2}): I-JSON
// (RFC 7493 §2.3). encoding/json keeps the last silently, so what a proxy,
// a log or an audit that reads the first sees would not be what was
// stored. Only the first value is read: decode refuses what follows it,
// and words other syntax errors itself.
func uniqueNames(body []byte) error {
	dec := jsontext.NewDecoder(bytes.NewReader(body))
	for {
		_, err := dec.ReadToken()
		if err == nil && dec.StackDepth() == 0 {
			return nil // the first value is whole
		}
		if err == nil {
			continue
		}
		serr, ok := errors.AsType[*jsontext.SyntacticError](err)
		if !ok || !errors.Is(err, jsontext.ErrDuplicateName) {
			return nil // the end, or an error decode words
		}
		field := memberPath(body, serr.JSONPointer)
		return &domain.Error{Kind: domain.Invalid, Code: "malformed_json",
			Message: "the request body names a member twice in one object: " + strconv.Quote(field),
			Fields:  []domain.FieldError{{Field: field, Message: "appears more than once in its object"}}}
	}
}

// memberPath spells ptr, a JSON Pointer into body, as problems name
// fields: dotted, with array indices in brackets ("businessPersons[1].types").
func memberPath(body []byte, ptr jsontext.Pointer) string {
	var doc any
	// The first value only, as uniqueNames reads it: enough to tell arrays
	// from objects even when something follows it.
	_ = json.NewDecoder(bytes.NewReader(body)).Decode(&doc)
	path := ""
	for tok := range ptr.Tokens() {
		switch d := doc.(type) {
		case []any:
			path += "[" + tok + "]"
			i, err := strconv.Atoi(tok)
			if doc = nil; err == nil && i < len(d) {
				doc = d[i]
			}
		default:
			if path != "" {
				path += "."
			}
			path += tok
			m, _ := doc.(map[string]any)
			doc = m[tok]
		}
	}
	return path
}
