package main

import (
	"io"
	"maps"
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
