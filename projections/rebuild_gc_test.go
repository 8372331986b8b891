package projections

import (
	"runtime/debug"
	"testing"
)

// TestWithRebuildGC: the rebuild's collector target is set and put back,
// and an operator's GOGC is left alone.
func TestWithRebuildGC(t *testing.T) {
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)

	t.Setenv("GOGC", "")
	restore := WithRebuildGC()
	if got := debug.SetGCPercent(RebuildGCPercent); got != RebuildGCPercent {
		t.Errorf("during a rebuild the GC target is %d, want %d", got, RebuildGCPercent)
	}
	restore()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("after a rebuild the GC target is %d, want 100 back", got)
	}

	t.Setenv("GOGC", "50")
	restore = WithRebuildGC()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("with GOGC set the rebuild changed the GC target to %d", got)
	}
	restore()
}
