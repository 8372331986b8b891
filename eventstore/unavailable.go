package eventstore

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// Unavailable reports whether err means Postgres could not be reached or
// went away (a restart, a failover, a network cut), as opposed to a fault
// of the request or of this code. The API answers such errors 503 with
// Retry-After instead of 500: nothing about the request was wrong, the
// transaction it ran in did not commit or its outcome is unknown, and a
// retry with the same Idempotency-Key is safe either way.
func Unavailable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return true
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		// Class 08: connection exception; 57P01-57P03: the server is shutting
		// down, crashed or not yet accepting connections; 53300: too many
		// connections; 25006: a write reached a server that is read-only, a
		// standby, as a failover's demoted primary is (a connection checks
		// target_session_attrs only when it opens).
		return strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" ||
			pe.Code == "57P03" || pe.Code == "53300" || pe.Code == "25006"
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, net.ErrClosed) {
		return true
	}
	// pgx reports a connection it found broken (the server closed it) as
	// "conn closed" without a typed cause.
	return strings.Contains(err.Error(), "conn closed") || pgconn.Timeout(err)
}
