// Package gcsettings holds the commands' garbage-collector setting. Tuning
// the runtime is a command's business: a library never changes its
// process's collector on its own.
package gcsettings

import "runtime/debug"

// ServicePercent is the GOGC of a process that serves the write path
// (ledgerd) when its environment sets none.
//
// The Go default, 100, collects each time the heap doubles. ledgerd's live
// heap is small and most of what it allocates is per request or per append
// (bodies, JSON, pgx batches) and dead within milliseconds, so at 100 the
// collector runs often and takes a visible share of ledgerd's CPU; a
// higher setting trades some resident memory for throughput (the measured
// figures are in docs/performance.md). GOGC and GOMEMLIMIT, when set, are
// the runtime's own to apply; in a container with a memory limit, set
// GOMEMLIMIT a little below it.
const ServicePercent = 400

// WithService applies ServicePercent unless getenv("GOGC") chose a
// setting, reports whether it did, and returns the function that puts the
// previous setting back. ledgerd calls it at start, and ledgerbench around
// the write path it runs in its own process, so the benchmark measures it
// as ledgerd runs it.
func WithService(getenv func(string) string) (restore func(), applied bool) {
	if getenv("GOGC") != "" {
		return func() {}, false
	}
	previous := debug.SetGCPercent(ServicePercent)
	return func() { debug.SetGCPercent(previous) }, true
}
