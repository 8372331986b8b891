package eventstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestUnavailable(t *testing.T) {
	opErr := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"a connection refused", fmt.Errorf("append: %w", opErr), true},
		{"the server shutting down", &pgconn.PgError{Code: "57P01"}, true},
		{"the server starting up", fmt.Errorf("load: %w", &pgconn.PgError{Code: "57P03"}), true},
		{"a connection exception", &pgconn.PgError{Code: "08006"}, true},
		{"too many connections", &pgconn.PgError{Code: "53300"}, true},
		{"a write on a server now a standby", fmt.Errorf("append: %w", &pgconn.PgError{Code: "25006"}), true},
		{"a connection cut mid-answer", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true},
		{"a unique violation", &pgconn.PgError{Code: "23505"}, false},
		{"a syntax error", &pgconn.PgError{Code: "42601"}, false},
		{"the caller gave up", fmt.Errorf("query: %w", context.Canceled), false},
		{"any other error", errors.New("decode state: unexpected end of JSON"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Unavailable(tc.err); got != tc.want {
				t.Fatalf("Unavailable(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}
