package rebuild

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ledger/ledger/eventstore/testenv"
)

// testConns opens n connections to a new database of the test's own, and
// a context that ends with the test (a minute at most).
func testConns(t *testing.T, n int) (context.Context, []*pgx.Conn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	url := testenv.NewDatabase(t)
	conns := make([]*pgx.Conn, n)
	for i := range conns {
		c, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(context.Background()) })
		conns[i] = c
	}
	return ctx, conns
}
