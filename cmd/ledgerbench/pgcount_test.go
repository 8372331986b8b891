package main

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ledger/ledger/eventstore/testenv"
)

// TestPGCounterCounts runs a known mix through the proxy to the real
// server: a pipeline of two statements, an explicit transaction and a
// simple query, and checks what it counted, by statement too.
func TestPGCounterCounts(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := startPGCounter(testenv.DatabaseURL())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	url, err := c.URL(testenv.DatabaseURL())
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	before := c.snapshot()
	c.mu.Lock()
	_, known := c.backends[int(conn.PgConn().PID())]
	c.mu.Unlock()
	if before.Connections != 1 || !known {
		t.Errorf("after connecting: %d connections, backend %d known: %v", before.Connections, conn.PgConn().PID(), known)
	}
	b := &pgx.Batch{}
	b.Queue(`SELECT $1::int`, 1)
	b.Queue(`SELECT $1::int + 1`, 1)
	if err := conn.SendBatch(ctx, b).Close(); err != nil {
		t.Fatal(err)
	}
	if err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `SELECT $1::int`, 2)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `SELECT 1`); err != nil {
		t.Fatal(err)
	}
	if err := conn.Close(ctx); err != nil {
		t.Fatal(err)
	}
	after := c.snapshot()
	// begin, 3 × SELECT $1..., commit, SELECT 1: six statements. The batch
	// and the transaction's SELECT are prepared first (a round trip each
	// unless cached), so only the lower bound of round trips is exact.
	if got := after.Statements - before.Statements; got != 6 {
		t.Errorf("statements: got %d, want 6", got)
	}
	if got := after.Transactions - before.Transactions; got < 3 {
		t.Errorf("transactions: got %d, want at least 3 (the batch, the transaction, the query)", got)
	}
	if got := after.RoundTrips - before.RoundTrips; got < 5 {
		t.Errorf("round trips: got %d, want at least 5", got)
	}
	if got := after.BySQL["SELECT $1::int"] - before.BySQL["SELECT $1::int"]; got != 2 {
		t.Errorf("SELECT $1::int: got %d, want 2", got)
	}
	if after.CPUTicks < before.CPUTicks {
		t.Errorf("backend CPU went back: %d, then %d", before.CPUTicks, after.CPUTicks)
	}
}
