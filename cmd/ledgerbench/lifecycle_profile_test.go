package main

import (
	"math"
	"testing"
	"time"
)

// TestProfileNetOfIdle checks the per-payment arithmetic: the timed
// window's counts, less the idle server's rate over as long, divided by
// the payments; statements below 0.005 a payment are left out.
func TestProfileNetOfIdle(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 4, 0, 0, 0, time.UTC)
	reading := func(at time.Duration, tx, stmts, cpu int64, polls, inserts int64, last uint64) profileReading {
		return profileReading{at: t0.Add(at), xactCommit: tx, events: int64(last), streamLast: last,
			ledgerdCPU: uint64(cpu), pg: pgSnapshot{pgCounts: pgCounts{Transactions: tx, Statements: stmts, RoundTrips: stmts},
				CPUTicks: uint64(cpu), BySQL: map[string]int64{"poll": polls, "insert": inserts}}}
	}
	// Idle: 10 transactions and polls a second, 1 tick a second.
	i0 := reading(0, 0, 0, 0, 0, 0, 0)
	i1 := reading(5*time.Second, 50, 50, 5, 50, 0, 0)
	// Timed, 10 s: 100 idle transactions plus 20 for each of 10 payments.
	t1 := reading(15*time.Second, 50+100+200, 50+100+200, 5+10+30, 50+100, 200, 40)
	pc := profile(i0, i1, i1, t1, 10)
	near := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s: got %v, want %v", name, got, want)
		}
	}
	near("window", pc.WindowSeconds, 10)
	near("transactions", pc.PerPayment.Transactions, 20)
	near("statements", pc.PerPayment.Statements, 20)
	near("ledgerd CPU ms", pc.PerPayment.LedgerdCPUMs, 30*1000/clockTicks/10)
	near("publishes", pc.PerPayment.Publishes, 4)
	near("idle transactions/s", pc.IdlePerSecond.Transactions, 10)
	if len(pc.Statements) != 1 || pc.Statements[0].SQL != "insert" {
		t.Fatalf("statements: got %+v, want only insert (the polls are the idle rate)", pc.Statements)
	}
	near("insert", pc.Statements[0].PerPayment, 20)
	if pc.Error != "" {
		t.Errorf("error: %s", pc.Error)
	}
}
