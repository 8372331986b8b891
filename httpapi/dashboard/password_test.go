package dashboard

import (
	"sync"
	"sync/atomic"
	"testing"
)

// TestArgonRunsAtMostSlotsAtOnce: sign-in attempts sent in parallel hash
// one slot at a time beyond the bound, so their memory stays bounded.
func TestArgonRunsAtMostSlotsAtOnce(t *testing.T) {
	var running, peak atomic.Int32
	real := idKey
	idKey = func(password, salt []byte, time, memory uint32, threads uint8, keyLen uint32) []byte {
		n := running.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		defer running.Add(-1)
		return real(password, salt, time, memory, threads, keyLen)
	}
	defer func() { idKey = real }()
	hash := hashPassword("correct horse battery staple")
	var wg sync.WaitGroup
	for range 4 * cap(argonSlots) {
		wg.Go(func() { checkPassword(hash, "wrong") })
	}
	wg.Wait()
	if got := int(peak.Load()); got > cap(argonSlots) || got < 1 {
		t.Fatalf("argon2 ran %d at once, want at most %d", got, cap(argonSlots))
	}
}
