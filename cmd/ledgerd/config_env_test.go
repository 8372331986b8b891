package main

import (
	"io"
	"maps"
	"os"
	"path/filepath"
	"testing"
)

// loadEnv is loadConfig with env as the whole environment and no flags.
func loadEnv(env map[string]string) (config, error) {
	return loadConfig(nil, func(k string) string { return env[k] }, io.Discard)
}

// changed is base with changes made: an empty value removes the setting,
// as configuration tests take one away from a working set.
func changed(base, changes map[string]string) map[string]string {
	out := maps.Clone(base)
	for k, v := range changes {
		if v == "" {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	return out
}

// settingFile writes b to a file named name, readable by its owner only
// as ledgerd's secret files should be, and returns its path for a *_FILE
// setting.
func settingFile(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
