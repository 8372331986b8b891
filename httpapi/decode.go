package httpapi

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/ledger/ledger/domain"
)

// maxJSONBody is the largest JSON request body accepted (contract §1).
const maxJSONBody = 1 << 20

// maxRequestBody is the largest body of any request: a 10 MiB upload with
// its multipart framing.
const maxRequestBody = 10<<20 + 64<<10

// decode reads r's body strictly into v: JSON content type (415 otherwise),
// at most 1 MiB (413), no unknown fields, no wrong types, no trailing data.
func decode(w http.ResponseWriter, r *http.Request, v any) error {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return domain.Errorf(domain.Unsupported, "unsupported_media_type", "the request body must be application/json")
	}
	body := http.MaxBytesReader(w, r.Body, maxJSONBody)
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return decodeError(err)
		}
		return domain.Errorf(domain.Invalid, "malformed_json", "the request body must hold exactly one JSON value")
	}
	return nil
}

// decodeError turns a json decoding error into a problem naming the field.
func decodeError(err error) error {
	var (
		tooBig    *http.MaxBytesError
		typeErr   *json.UnmarshalTypeError
		syntaxErr *json.SyntaxError
	)
	switch {
	case errors.As(err, &tooBig):
		return domain.Errorf(domain.TooLarge, "body_too_large", "the request body is larger than 1 MiB")
	case errors.As(err, &typeErr):
		field := typeErr.Field
		if field == "" {
			return domain.Errorf(domain.Invalid, "malformed_json", "the request body must be a JSON object")
		}
		return &domain.Error{Kind: domain.Invalid, Code: "validation_failed", Message: field + " has the wrong type",
			Fields: []domain.FieldError{{Field: field, Message: "must be a " + jsonKind(typeErr.Type.Kind().String())}}}
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
		return "string"
	case "bool":
		return "boolean"
	case "slice", "array":
		return "array"
	case "map", "struct":
		return "object"
	}
	return "number"
}

// requireString returns a 400 naming field when v is empty.
func requireString(field, v string) error {
	if strings.TrimSpace(v) == "" {
		return domain.Invalidf(field, "is required")
	}
	return nil
}
