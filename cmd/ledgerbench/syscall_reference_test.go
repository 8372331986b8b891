package main

import "testing"

// TestSyscallReference: the reference is measured, and a report without
// one prints a dash.
func TestSyscallReference(t *testing.T) {
	if ns := syscallReferenceNanos(); ns <= 0 {
		t.Fatalf("syscallReferenceNanos = %v", ns)
	}
	if got := (machine{}).syscallReferenceFigure(); got != "-" {
		t.Errorf("no reference: %q, want -", got)
	}
	if got := (machine{SyscallReferenceNs: 1034.6}).syscallReferenceFigure(); got != "1035 ns" {
		t.Errorf("figure: %q, want 1035 ns", got)
	}
}
