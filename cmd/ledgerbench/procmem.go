package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// procMemory is a process's resident memory from Linux /proc/<pid>/status,
// in bytes: RSS now (VmRSS) and its peak since the process started (VmHWM).
type procMemory struct {
	RSS, HWM uint64
}

// readProcMemory reads pid's resident memory; it fails where /proc is not
// available and for a process that has exited.
func readProcMemory(pid int) (procMemory, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return procMemory{}, err
	}
	return parseProcStatus(string(b))
}

// parseProcStatus reads VmRSS and VmHWM from the text of /proc/<pid>/status,
// whose lines are "Name:<whitespace>value", the memory ones "<n> kB" with
// kB meaning 1024 bytes.
func parseProcStatus(s string) (procMemory, error) {
	var m procMemory
	var seen int
	for _, line := range strings.Split(s, "\n") {
		name, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		var dst *uint64
		switch name {
		case "VmRSS":
			dst = &m.RSS
		case "VmHWM":
			dst = &m.HWM
		default:
			continue
		}
		f := strings.Fields(val)
		if len(f) != 2 || f[1] != "kB" {
			return procMemory{}, fmt.Errorf("proc status: %s is %q, not <n> kB", name, strings.TrimSpace(val))
		}
		n, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			return procMemory{}, fmt.Errorf("proc status: %s: %w", name, err)
		}
		*dst = n * 1024
		seen++
	}
	if seen != 2 {
		return procMemory{}, fmt.Errorf("proc status: no VmRSS and VmHWM (a kernel thread, or not Linux)")
	}
	return m, nil
}

// rssSampler polls a process's VmRSS and keeps the highest value seen.
type rssSampler struct {
	pid  int
	stop chan struct{}
	done chan struct{}

	mu      sync.Mutex
	peak    uint64
	samples int
}

// sampleRSS polls pid's RSS every interval until finish.
func sampleRSS(pid int, every time.Duration) *rssSampler {
	s := &rssSampler{pid: pid, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			s.sample()
			select {
			case <-s.stop:
				s.sample()
				return
			case <-t.C:
			}
		}
	}()
	return s
}

func (s *rssSampler) sample() {
	m, err := readProcMemory(s.pid)
	if err != nil {
		return // no /proc here, or the process is gone: finish says so
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.peak = max(s.peak, m.RSS)
	s.samples++
}

// finish stops polling and returns the highest RSS seen in bytes, and
// whether any sample was read at all.
func (s *rssSampler) finish() (uint64, bool) {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak, s.samples > 0
}

// megabytes converts bytes to MB (10^6 bytes), the unit of the RSS target.
func megabytes(b uint64) float64 { return float64(b) / 1e6 }
