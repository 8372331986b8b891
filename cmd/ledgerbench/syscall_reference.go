package main

import (
	"fmt"
	"syscall"
	"testing"
)

// syscallReferenceNanos is how long one system call that does no work
// (getppid) takes, in ns, measured at the start of a run. A rebuild makes
// over a million system calls (Postgres reads and writes its pages 8 kB at
// a time, and its socket likewise), and what each costs depends on the
// machine far more than the CPU reference shows: on a virtual machine
// whose kernel flushes the TLB at every kernel entry (pti=on, no PCID), a
// system call costs several times as much while the CPU reference can look
// its best (docs/performance.md, "Machines").
func syscallReferenceNanos() float64 {
	r := testing.Benchmark(func(b *testing.B) {
		for b.Loop() {
			syscall.Getppid()
		}
	})
	return float64(r.NsPerOp())
}

// syscallReferenceFigure is the reference as the reports print it.
func (m machine) syscallReferenceFigure() string {
	if m.SyscallReferenceNs <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f ns", m.SyscallReferenceNs)
}
