package main

import (
	"strings"
	"testing"
	"time"

	"github.com/ledger/ledger/domain"
)

// TestValidityBounds: a Lightning validity (lightning, slow) is its deposit
// invoice's expiry, so it must be whole seconds and at most lnd's year;
// the other rails need only a second.
func TestValidityBounds(t *testing.T) {
	t.Parallel()
	load := func(v string) (config, error) {
		return loadEnv(map[string]string{"LEDGER_VALIDITY": v})
	}
	for _, v := range []string{"lightning=1500ms", "slow=8761h", "lightning=0.5s", "usdt=500ms"} {
		if _, err := load(v); err == nil || !strings.Contains(err.Error(), "LEDGER_VALIDITY") {
			t.Errorf("LEDGER_VALIDITY=%s: got %v, want a LEDGER_VALIDITY error", v, err)
		}
	}
	cfg, err := load("lightning=3s,slow=8760h,momo=1500ms")
	if err != nil {
		t.Fatal(err)
	}
	want := domain.DefaultValidity
	want.Lightning, want.Slow, want.Momo = 3*time.Second, 8760*time.Hour, 1500*time.Millisecond
	if cfg.Validity != want {
		t.Errorf("got %+v, want %+v", cfg.Validity, want)
	}
}
