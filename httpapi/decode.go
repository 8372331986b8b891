package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"reflect"
	"slices"
	"strings"

	"github.com/ledger/ledger/domain"
)

// maxJSONBody is the largest JSON request body accepted (contract §1).
const maxJSONBody = 1 << 20

var errBodyTooLarge = domain.Errorf(domain.TooLarge, "body_too_large", "the request body is larger than 1 MiB")

// maxRequestBody is the largest body of any request: a 10 MiB upload with
// its multipart framing.
const maxRequestBody = 10<<20 + 64<<10

// decode reads r's body strictly into v: JSON content type (415 otherwise),
// at most 1 MiB (413), no unknown fields, no member name twice in an
// object, no wrong types, no trailing data.
func decode(w http.ResponseWriter, r *http.Request, v any) error {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return domain.Errorf(domain.Unsupported, "unsupported_media_type", "the request body must be application/json")
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxJSONBody))
	if err != nil {
		return decodeError(err)
	}
	if err := domain.CheckJSONText(body); err != nil {
		return domain.Errorf(domain.Invalid, "malformed_json", "the request body is not valid JSON text: %v", err)
	}
	// Names first: the decoder's own unknown-field check neither sees case
	// nor says where a nested member is, and stops at UnmarshalJSON.
	if err := exactNames(body, reflect.TypeOf(v)); err != nil {
		return err
	}
	if err := uniqueNames(body); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError(indexed(err, body))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return domain.Errorf(domain.Invalid, "malformed_json", "the request body must hold exactly one JSON value")
	}
	return nil
}

// exactNames rejects members that are not fields of t, at any depth, naming
// them dotted (contract §1), and members whose names match a field only when
// case is ignored: encoding/json takes "apikey" (or "APIKEY", after
// "apiKey") for apiKey, which a strict decoder must not.
func exactNames(body []byte, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return decodeError(err)
	}
	if field, ok := misnamed(doc, t, ""); ok {
		return &domain.Error{Kind: domain.Invalid, Code: "unknown_field", Message: "unknown field " + field,
			Fields: []domain.FieldError{{Field: field, Message: "is not a field of this request (names are case-sensitive)"}}}
	}
	return nil
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// misnamed returns the dotted path of the first member of doc not spelled
// exactly as a field of t, and whether there is one: the path of a member
// named "" at the top level is "".
func misnamed(doc any, t reflect.Type, path string) (string, bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if v, ok := optionalValue(t); ok {
		return misnamed(doc, v, path)
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return "", false // decodes itself
	}
	switch d := doc.(type) {
	case map[string]any:
		var fields map[string]reflect.Type
		switch t.Kind() {
		case reflect.Struct:
			fields = jsonFields(t)
		case reflect.Map:
		default:
			return "", false
		}
		for _, name := range slices.Sorted(maps.Keys(d)) {
			p := name
			if path != "" {
				p = path + "." + name
			}
			ft := t
			if t.Kind() == reflect.Map {
				ft = t.Elem()
			} else if ft = fields[name]; ft == nil {
				return p, true
			}
			if bad, ok := misnamed(d[name], ft, p); ok {
				return bad, true
			}
		}
	case []any:
		if t.Kind() != reflect.Slice && t.Kind() != reflect.Array {
			return "", false
		}
		for i, v := range d {
			if bad, ok := misnamed(v, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); ok {
				return bad, true
			}
		}
	}
	return "", false
}

// optionalType is an instance of domain.Optional, the PATCH bodies' field
// wrapper, whose members are request members like any other.
var optionalType = reflect.TypeFor[domain.Optional[struct{}]]()

// optionalValue returns T when t is a domain.Optional[T].
func optionalValue(t reflect.Type) (reflect.Type, bool) {
	if t.Kind() != reflect.Struct || t.PkgPath() != optionalType.PkgPath() || !strings.HasPrefix(t.Name(), "Optional[") {
		return nil, false
	}
	f, ok := t.FieldByName("Value")
	return f.Type, ok
}

// jsonFields maps the exact JSON names of struct t's fields, embedded
// structs' promoted ones included, to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	fields := map[string]reflect.Type{}
	for _, f := range reflect.VisibleFields(t) {
		tag := f.Tag.Get("json")
		if tag == "-" || !f.IsExported() && !f.Anonymous {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			continue // its fields are visible fields themselves
		}
		if name == "" {
			name = f.Name
		}
		fields[name] = f.Type
	}
	return fields
}

// indexed gives a type error the array indices that encoding/json leaves
// out of its Field ("businessPersons.ownership"), so the problem names a
// member the request holds: the path of the first value in the body, in
// document order (the order the decoder reports in), of the kind the error
// describes at that field ("businessPersons[1].ownership"). Other errors
// are returned as they are.
func indexed(err error, body []byte) error {
	var typeErr *json.UnmarshalTypeError
	if !errors.As(err, &typeErr) || typeErr.Field == "" {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc any
	if dec.Decode(&doc) != nil {
		return err
	}
	path, ok := locate(doc, strings.Split(typeErr.Field, "."), typeErr.Value, "")
	if !ok {
		return err
	}
	e := *typeErr
	e.Field = path
	return &e
}

// locate returns the path of the first value, depth first, at the member
// names segs below doc (stepping into every array on the way) that is
// value, as a type error describes it: "string", "number 1e400", ...
func locate(doc any, segs []string, value, path string) (string, bool) {
	if a, ok := doc.([]any); ok {
		for i, el := range a {
			if p, ok := locate(el, segs, value, fmt.Sprintf("%s[%d]", path, i)); ok {
				return p, true
			}
		}
	}
	if len(segs) == 0 {
		return path, isValue(doc, value)
	}
	m, ok := doc.(map[string]any)
	if !ok {
		return "", false
	}
	child, ok := m[segs[0]]
	if !ok {
		return "", false
	}
	p := segs[0]
	if path != "" {
		p = path + "." + segs[0]
	}
	return locate(child, segs[1:], value, p)
}

// isValue reports whether doc is the value a type error describes: its
// JSON kind, and for a number the literal when the error gives one.
func isValue(doc any, value string) bool {
	kind, literal, _ := strings.Cut(value, " ")
	switch d := doc.(type) {
	case string:
		return kind == "string"
	case json.Number:
		return kind == "number" && (literal == "" || literal == d.String())
	case bool:
		return kind == "bool"
	case []any:
		return kind == "array"
	case map[string]any:
		return kind == "object"
	}
	return false
}

// decodeError turns a json decoding error into a problem naming the field.
func decodeError(err error) error {
	var (
		tooBig    *http.MaxBytesError
		typeErr   *json.UnmarshalTypeError
		syntaxErr *json.SyntaxError
	)
	switch {
	case errors.Is(err, errBodyTooSlow):
		return errBodyTooSlow
	case errors.As(err, &tooBig):
		return errBodyTooLarge
	case errors.As(err, &typeErr):
		field := typeErr.Field
		if field == "" {
			return domain.Errorf(domain.Invalid, "malformed_json", "the request body must be a JSON object")
		}
		return &domain.Error{Kind: domain.Invalid, Code: "validation_failed", Message: field + " has the wrong type",
			Fields: []domain.FieldError{{Field: field, Message: "must be " + jsonKind(typeErr.Type.Kind().String())}}}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		field := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return &domain.Error{Kind: domain.Invalid, Code: "unknown_field", Message: "unknown field " + field,
			Fields: []domain.FieldError{{Field: field, Message: "is not a field of this request"}}}
	case errors.As(err, &syntaxErr), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return domain.Errorf(domain.Invalid, "malformed_json", "the request body is not valid JSON")
	}
	return domain.Errorf(domain.Invalid, "malformed_json", "the request body could not be read")
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "slice", "array":
		return "an array"
	case "map", "struct":
		return "an object"
	}
	return "a number"
}

// requireString returns a 400 naming field when v is empty.
func requireString(field, v string) error {
	if strings.TrimSpace(v) == "" {
		return domain.Invalidf(field, "is required")
	}
	return nil
}
