package gcsettings

import (
	"runtime/debug"
	"testing"
)

// TestWithServiceDefaultsUnlessGOGCIsSet: GOGC unset gives
// ServicePercent until restored; GOGC set leaves the runtime alone.
func TestWithServiceDefaultsUnlessGOGCIsSet(t *testing.T) {
	before := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(before) })

	restore, applied := WithService(func(string) string { return "150" })
	if applied {
		t.Fatal("WithService changed the GC percent although GOGC is set")
	}
	restore()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("GOGC set: GC percent %d, want the runtime's 100 left alone", got)
	}
	restore, applied = WithService(func(string) string { return "" })
	if !applied {
		t.Fatal("WithService did nothing with GOGC unset")
	}
	if got := debug.SetGCPercent(ServicePercent); got != ServicePercent {
		t.Fatalf("GOGC unset: GC percent %d, want %d", got, ServicePercent)
	}
	restore()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("restored: GC percent %d, want 100 again", got)
	}
}
