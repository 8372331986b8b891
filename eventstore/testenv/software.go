package testenv

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
)

// MissingSoftware ends a test that needs software this machine lacks: under
// CI=true, where every test must run, it fails; elsewhere it is skipped,
// saying how to get it.
func MissingSoftware(t testing.TB, what, howToGet string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s; CI must have it: %s", what, howToGet)
	}
	t.Skipf("%s (%s; with CI=true this fails)", what, howToGet)
}

// CachedBinaries returns the paths of names in the directory the
// repository's build scripts (.ci/geth, .ci/lnd) fill once:
// $LEDGER_CACHE_DIR/bin, by default ~/.cache/ledger/bin. A missing one ends
// t (MissingSoftware), naming script.
func CachedBinaries(t testing.TB, script string, names ...string) []string {
	t.Helper()
	cache := os.Getenv("LEDGER_CACHE_DIR")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			t.Fatal(err)
		}
		cache = filepath.Join(home, ".cache", "ledger")
	}
	paths := make([]string, len(names))
	for i, name := range names {
		paths[i] = filepath.Join(cache, "bin", name)
		if _, err := os.Stat(paths[i]); err != nil {
			MissingSoftware(t, fmt.Sprintf("%s is not built (%v)", name, err), "run "+script)
		}
	}
	return paths
}

// FreePort returns a TCP port free on the loopback address now, for a
// server the test starts.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
