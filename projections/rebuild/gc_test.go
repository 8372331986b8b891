package rebuild

import (
	"math"
	"runtime/debug"
	"testing"
)

// TestWithRebuildGC: the rebuild's collector target and memory limit are
// set and put back, and an operator's GOGC and GOMEMLIMIT are left alone.
func TestWithRebuildGC(t *testing.T) {
	const noLimit = math.MaxInt64
	beforePercent, beforeLimit := debug.SetGCPercent(100), debug.SetMemoryLimit(noLimit)
	defer func() { debug.SetGCPercent(beforePercent); debug.SetMemoryLimit(beforeLimit) }()

	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	restore := WithGC()
	if got := debug.SetGCPercent(GCPercent); got != GCPercent {
		t.Errorf("during a rebuild the GC target is %d, want %d", got, GCPercent)
	}
	if got := debug.SetMemoryLimit(-1); got != MemoryLimit {
		t.Errorf("during a rebuild the memory limit is %d, want %d", got, MemoryLimit)
	}
	restore()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("after a rebuild the GC target is %d, want 100 back", got)
	}
	if got := debug.SetMemoryLimit(-1); got != noLimit {
		t.Errorf("after a rebuild the memory limit is %d, want none back", got)
	}

	t.Setenv("GOGC", "50")
	t.Setenv("GOMEMLIMIT", "1GiB")
	restore = WithGC()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("with GOGC set the rebuild changed the GC target to %d", got)
	}
	if got := debug.SetMemoryLimit(-1); got != noLimit {
		t.Errorf("with GOMEMLIMIT set the rebuild changed the memory limit to %d", got)
	}
	restore()
}
