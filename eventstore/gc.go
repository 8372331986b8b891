package eventstore

import "runtime/debug"

// ServiceGCPercent is the GOGC of a process that serves the write path
// (ledgerd) when its environment sets none.
//
// The Go default, 100, collects each time the heap doubles. ledgerd's live
// heap is small (some 20 MB) and most of what it allocates is per request
// or per append (bodies, JSON, pgx batches) and dead within milliseconds,
// so at 100 the collector ran about every 20 MB of allocation and took
// some 9% of ledgerd's CPU at 64 concurrent POST /payments. At 400, in
// three interleaved pairs of `ledgerbench payments -concurrency 64`,
// ledgerd created 5-12% more payments a second, for a peak RSS of 98 MB
// instead of 58. GOGC and GOMEMLIMIT, when set, are the runtime's own to
// apply; in a container with a memory limit, set GOMEMLIMIT a little below
// it.
const ServiceGCPercent = 400

// WithServiceGC applies ServiceGCPercent unless getenv("GOGC") chose a
// setting, reports whether it did, and returns the function that puts the
// previous setting back. The package never changes its process's collector
// on its own: ledgerd calls this at start, and ledgerbench around the write
// path it runs in its own process, so the benchmark measures it as ledgerd
// runs it.
func WithServiceGC(getenv func(string) string) (restore func(), applied bool) {
	if getenv("GOGC") != "" {
		return func() {}, false
	}
	previous := debug.SetGCPercent(ServiceGCPercent)
	return func() { debug.SetGCPercent(previous) }, true
}
