package main

import "testing"

// TestCPUReference: the reference work runs (a payment's JSON round trip
// that failed would give 0, and the reports a dash).
func TestCPUReference(t *testing.T) {
	if us := cpuReferenceMicros(); us <= 0 {
		t.Fatalf("cpuReferenceMicros = %v", us)
	}
	if got := (machine{}).cpuReferenceFigure(); got != "-" {
		t.Errorf("no reference: %q, want -", got)
	}
}
