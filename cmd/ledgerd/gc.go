package main

import "runtime/debug"

// defaultGCPercent is ledgerd's GOGC when the environment sets none.
//
// The Go default, 100, collects each time the heap doubles. ledgerd's live
// heap is small (some 20 MB) and most of what it allocates is per request
// (bodies, JSON, pgx batches) and dead within milliseconds, so at 100 the
// collector ran about every 20 MB of allocation and took some 9% of
// ledgerd's CPU at 64 concurrent POST /payments. At 400, in three
// interleaved pairs of `ledgerbench payments -concurrency 64`, ledgerd
// created 5-12% more payments a second, for a peak RSS of 98 MB instead of
// 58. GOGC and GOMEMLIMIT, when set, are the runtime's own to apply; in a
// container with a memory limit, set GOMEMLIMIT a little below it.
const defaultGCPercent = 400

// tuneGC applies defaultGCPercent unless GOGC is set, and reports whether it did.
func tuneGC(getenv func(string) string) bool {
	if getenv("GOGC") != "" {
		return false
	}
	debug.SetGCPercent(defaultGCPercent)
	return true
}
