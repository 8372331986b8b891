package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// procCPU is a process's cumulative CPU time (user + system) from Linux
// /proc/<pid>/stat, in clock ticks, the unit of /proc/stat's.
type procCPU struct {
	ticks uint64
	ok    bool
}

// readProcCPU reads pid's CPU time; not ok where /proc is not available or
// the process is gone.
func readProcCPU(pid int) procCPU {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procCPU{}
	}
	return parseProcStat(string(b))
}

// parseProcStat reads utime and stime, fields 14 and 15 of
// /proc/<pid>/stat. The second field, the command in parentheses, may hold
// spaces and parentheses itself, so fields are counted after its last ')'.
func parseProcStat(s string) procCPU {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procCPU{}
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3, the state
	if len(f) < 13 {
		return procCPU{}
	}
	utime, err1 := strconv.ParseUint(f[11], 10, 64)
	stime, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return procCPU{}
	}
	return procCPU{ticks: utime + stime, ok: true}
}

// procShare is the share of all the machine's CPU time between two
// readings that the process used (1 = every CPU, the whole time), or nil
// where unknown.
func procShare(p0, p1 procCPU, m0, m1 cpuTimes) *float64 {
	if !p0.ok || !p1.ok || !m0.ok || !m1.ok || m1.total <= m0.total || p1.ticks < p0.ticks {
		return nil
	}
	v := float64(p1.ticks-p0.ticks) / float64(m1.total-m0.total)
	return &v
}
