package eventstore

import (
	"runtime/debug"
	"testing"
)

// TestWithServiceGCDefaultsUnlessGOGCIsSet: GOGC unset gives
// ServiceGCPercent until restored; GOGC set leaves the runtime alone.
func TestWithServiceGCDefaultsUnlessGOGCIsSet(t *testing.T) {
	before := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(before) })

	restore, applied := WithServiceGC(func(string) string { return "150" })
	if applied {
		t.Fatal("WithServiceGC changed the GC percent although GOGC is set")
	}
	restore()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("GOGC set: GC percent %d, want the runtime's 100 left alone", got)
	}
	restore, applied = WithServiceGC(func(string) string { return "" })
	if !applied {
		t.Fatal("WithServiceGC did nothing with GOGC unset")
	}
	if got := debug.SetGCPercent(ServiceGCPercent); got != ServiceGCPercent {
		t.Fatalf("GOGC unset: GC percent %d, want %d", got, ServiceGCPercent)
	}
	restore()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("restored: GC percent %d, want 100 again", got)
	}
}
