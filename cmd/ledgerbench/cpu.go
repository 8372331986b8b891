package main

import (
	"os"
	"strconv"
	"strings"
)

// cpuTimes is the machine's cumulative CPU time (Linux /proc/stat, in clock
// ticks). Benchmarks on a shared or small machine are only comparable when
// the reader can see whether the CPU was saturated, and whether something
// else was running: a phase's busy share says the first, the load average
// before the run hints at the second.
type cpuTimes struct {
	busy, total uint64
	ok          bool
}

func readCPUTimes() cpuTimes {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuTimes{}
	}
	line, _, _ := strings.Cut(string(b), "\n")
	fields := strings.Fields(line)
	if len(fields) < 5 || fields[0] != "cpu" {
		return cpuTimes{}
	}
	var t cpuTimes
	for i, f := range fields[1:] {
		v, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return cpuTimes{}
		}
		t.total += v
		if i != 3 && i != 4 { // idle and iowait are not busy
			t.busy += v
		}
	}
	t.ok = true
	return t
}

// busySince returns the share of all CPUs that was busy between earlier and
// t, or nil where /proc/stat is not available.
func (t cpuTimes) busySince(earlier cpuTimes) *float64 {
	if !t.ok || !earlier.ok || t.total <= earlier.total {
		return nil
	}
	v := float64(t.busy-earlier.busy) / float64(t.total-earlier.total)
	return &v
}

// loadAverage returns the 1, 5 and 15 minute load averages, or "" where
// /proc/loadavg is not available.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}
