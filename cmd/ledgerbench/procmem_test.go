package main

import "testing"

func TestParseProcStatus(t *testing.T) {
	t.Parallel()
	status := "Name:\tledgerd\nState:\tS (sleeping)\nVmPeak:\t 1913284 kB\nVmSize:\t 1913284 kB\n" +
		"VmHWM:\t   61440 kB\nVmRSS:\t   40960 kB\nRssAnon:\t   20480 kB\nThreads:\t12\n"
	got, err := parseProcStatus(status)
	if err != nil {
		t.Fatal(err)
	}
	if want := (procMemory{RSS: 40960 * 1024, HWM: 61440 * 1024}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if megabytes(got.RSS) != 41.94304 {
		t.Errorf("megabytes(%d) = %v, want 41.94304", got.RSS, megabytes(got.RSS))
	}

	for name, bad := range map[string]string{
		"kernel thread": "Name:\tkthreadd\nState:\tS (sleeping)\nThreads:\t1\n",
		"no HWM":        "VmRSS:\t 100 kB\n",
		"other unit":    "VmHWM:\t 1 MB\nVmRSS:\t 1 MB\n",
		"not a number":  "VmHWM:\t x kB\nVmRSS:\t 1 kB\n",
	} {
		if m, err := parseProcStatus(bad); err == nil {
			t.Errorf("%s: got %+v, want an error", name, m)
		}
	}
}
