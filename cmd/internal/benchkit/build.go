package benchkit

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ledgerProgram is the import path of the ledger's commands, so that go build
// finds them from anywhere inside the module, not only from its root.
const ledgerProgram = "github.com/ledger/ledger/cmd/"

// BuildCommands builds the named commands of cmd/ (ledgerd, ledgerctl) into
// dir and returns their paths, in the order of names. A real binary, not
// go run, so that the process a benchmark starts, signals and samples is
// the server itself.
func BuildCommands(ctx context.Context, dir string, stderr io.Writer, names ...string) ([]string, error) {
	if len(names) == 0 {
		return nil, nil
	}
	args := []string{"build", "-o", dir + string(filepath.Separator)}
	paths := make([]string, len(names))
	for i, n := range names {
		args = append(args, ledgerProgram+n)
		paths[i] = filepath.Join(dir, n)
	}
	self := filepath.Base(os.Args[0])
	fmt.Fprintf(stderr, "%s: building %s\n", self, strings.Join(names, ", "))
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Stdout, cmd.Stderr = stderr, stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go build %s: %w (run %s inside the ledger module, or name binaries with -%s)",
			strings.Join(names, " "), err, self, strings.Join(names, ", -"))
	}
	return paths, nil
}

// BuildMissing builds ledgerd and ledgerctl into dir where their binaries
// are not named (empty), and sets them to the built paths.
func BuildMissing(ctx context.Context, ledgerd, ledgerctl *string, dir string, stderr io.Writer) error {
	var names []string
	var dst []*string
	if *ledgerd == "" {
		names, dst = append(names, "ledgerd"), append(dst, ledgerd)
	}
	if *ledgerctl == "" {
		names, dst = append(names, "ledgerctl"), append(dst, ledgerctl)
	}
	paths, err := BuildCommands(ctx, dir, stderr, names...)
	if err != nil {
		return err
	}
	for i, p := range paths {
		*dst[i] = p
	}
	return nil
}

// Env returns the environment for ledgerd and ledgerctl: this process's,
// without any ledger setting of the caller's shell (a stray LEDGER_MODE or
// NATS_URL would change what is measured), plus settings.
func Env(settings ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "LEDGER_") || name == "DATABASE_URL" || name == "NATS_URL" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, settings...)
}
