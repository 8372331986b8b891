package main

import (
	"runtime/debug"
	"testing"
)

func TestTuneGCDefaultsUnlessGOGCIsSet(t *testing.T) {
	before := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(before) })

	if tuneGC(func(string) string { return "150" }) {
		t.Fatal("tuneGC changed the GC percent although GOGC is set")
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("GOGC set: GC percent %d, want the runtime's 100 left alone", got)
	}
	if !tuneGC(func(string) string { return "" }) {
		t.Fatal("tuneGC did nothing with GOGC unset")
	}
	if got := debug.SetGCPercent(100); got != defaultGCPercent {
		t.Fatalf("GOGC unset: GC percent %d, want %d", got, defaultGCPercent)
	}
}
