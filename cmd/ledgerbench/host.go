package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
)

// host is machine plus what a published report needs to be compared with
// another run: the CPU model and the memory (a CPU count alone says little
// across clouds), the kernel, and the commit of the tree that was measured.
type host struct {
	machine
	CPUModel string  `json:"cpuModel"`
	MemoryMB float64 `json:"memoryMb"` // MemTotal; 0 where /proc/meminfo is not available
	Kernel   string  `json:"kernel"`
	Commit   string  `json:"commit"` // git HEAD, "-dirty" when the tree has changes; "unknown" outside git
}

// describeHost describes the machine and the servers at databaseURL and
// natsURL before anything runs, so the load average is the machine's own.
// output is the report's own path, which does not make the tree dirty.
func describeHost(ctx context.Context, databaseURL, natsURL, output string) (host, error) {
	h := host{CPUModel: cpuModel(), MemoryMB: memTotalMB(), Kernel: kernelRelease(), Commit: gitCommit(ctx, output)}
	pool, err := pgxpool.New(ctx, databaseURL)
	if err != nil {
		return h, fmt.Errorf("describe host: %w", err)
	}
	defer pool.Close()
	nc, err := nats.Connect(natsURL, nats.Name("ledgerbench"))
	if err != nil {
		return h, fmt.Errorf("describe host: connect to nats: %w", err)
	}
	defer nc.Close()
	h.machine, err = describeMachine(ctx, pool, nc)
	return h, err
}

// cpuModel is the first processor's model name in /proc/cpuinfo ("Hardware"
// or "Processor" on some ARM kernels), or "unknown".
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	return parseCPUModel(bufio.NewScanner(f))
}

func parseCPUModel(lines *bufio.Scanner) string {
	fallback := "unknown"
	for lines.Scan() {
		key, value, ok := strings.Cut(lines.Text(), ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(key) {
		case "model name":
			return strings.TrimSpace(value)
		case "Hardware", "Processor":
			fallback = strings.TrimSpace(value)
		}
	}
	return fallback
}

// memTotalMB is MemTotal from /proc/meminfo in MB (10^6 bytes), or 0.
func memTotalMB() float64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			kB, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 64)
			if err != nil {
				return 0
			}
			return kB * 1024 / 1e6
		}
	}
	return 0
}

// kernelRelease is /proc/sys/kernel/osrelease (uname -r), or "unknown".
func kernelRelease() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}

// gitCommit is the commit of the working tree, marked "-dirty" when tracked
// files other than output differ from it, since those changes were measured
// too (a regenerated report is not a change of what is measured). go run
// stamps no VCS information into the binary, so git itself is asked.
func gitCommit(ctx context.Context, output string) string {
	head, err := exec.CommandContext(ctx, "git", "rev-parse", "HEAD", "--show-toplevel").Output()
	lines := strings.Fields(string(head))
	if err != nil || len(lines) != 2 {
		return "unknown"
	}
	commit, top := lines[0], lines[1]
	args := []string{"status", "--porcelain", "--untracked-files=no", "--", ":/"}
	// git refuses a pathspec outside the tree, so a report written
	// elsewhere is no exclusion (it once marked every such run dirty).
	if at, err := realPath(output); err == nil {
		if rel, err := filepath.Rel(top, at); err == nil && filepath.IsLocal(rel) {
			args = append(args, ":(top,exclude)"+filepath.ToSlash(rel))
		}
	}
	status, err := exec.CommandContext(ctx, "git", args...).Output()
	if err != nil || len(strings.TrimSpace(string(status))) > 0 {
		commit += "-dirty"
	}
	return commit
}

// realPath is path made absolute with its directory's symbolic links
// resolved, as git names the top of the tree (the file may not exist yet).
func realPath(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(abs))
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, filepath.Base(abs)), nil
}
