// Package domain holds the ledger's aggregates as pure functions: state is folded
// from events (Apply) and commands are decided against state (Decide). It does no
// I/O and reads no clock: time and ids are arguments.
package domain

import (
	"errors"
	"fmt"
)

// Kind classifies an Error so the edge can map it to a status code.
type Kind uint8

// Kinds. Append only: the numbers are never reused.
const (
	Internal        Kind = iota // zero value: unknown errors are internal
	Invalid                     // 400
	Unauthenticated             // 401
	Forbidden                   // 403: valid token of the wrong kind
	NotFound                    // 404: absent, another tenant's, or inactive; never say which
	Conflict                    // 409
	TooLarge                    // 413
	Unsupported                 // 415
	Unprocessable               // 422
	Unavailable                 // 503
)

// FieldError names one invalid request field, spelled as in the request
// (dotted for nesting: business.registeredAddress.country).
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// Error is a failure the caller may see. Message is safe to show; Err is the
// cause and only ever logged.
type Error struct {
	Kind    Kind
	Code    string // stable machine-readable slug, e.g. "validation_failed"
	Message string
	Fields  []FieldError
	Err     error
	// Transient says the same request may succeed if sent again shortly
	// (a lost race with another writer): it is answered with Retry-After,
	// and an Idempotency-Key does not keep the answer.
	Transient bool
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return e.Code + ": " + e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf builds an *Error of kind with a stable code.
func Errorf(kind Kind, code, format string, args ...any) *Error {
	return &Error{Kind: kind, Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrNotFound is the one answer for a resource that is absent, another
// tenant's, or another user's: every lookup and every ownership check
// returns it, so neither its code nor its detail tells them apart
// (contract §2).
var ErrNotFound = Errorf(NotFound, "not_found", "not found")

// Invalidf is a 400 validation_failed naming one field.
func Invalidf(field, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	return &Error{Kind: Invalid, Code: "validation_failed", Message: field + " " + msg,
		Fields: []FieldError{{Field: field, Message: msg}}}
}

// ErrorKind returns the kind of err; errors that are not an *Error are Internal.
func ErrorKind(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return Internal
}
