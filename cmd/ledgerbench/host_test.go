package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGitCommit: a tree is dirty when a tracked file other than the report
// changed, whether the report is written inside the tree or outside it.
func TestGitCommit(t *testing.T) {
	repo := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(repo, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q")
	write("code.go", "package x\n")
	write("report.md", "old\n")
	git("add", ".")
	git("commit", "-q", "-m", "first")
	head := git("rev-parse", "HEAD")
	t.Chdir(repo)
	elsewhere := filepath.Join(t.TempDir(), "report.md")
	ctx := context.Background()

	write("report.md", "regenerated\n")
	for _, c := range []struct {
		name, output, want string
	}{
		{"report regenerated in the tree", "report.md", head},
		{"report written elsewhere, tree as committed but the report", elsewhere, head + "-dirty"},
	} {
		if got := gitCommit(ctx, c.output); got != c.want {
			t.Errorf("%s: gitCommit = %q, want %q", c.name, got, c.want)
		}
	}
	git("checkout", "-q", "report.md")
	if got := gitCommit(ctx, elsewhere); got != head {
		t.Errorf("clean tree, report elsewhere: gitCommit = %q, want %q", got, head)
	}
	write("code.go", "package x // changed\n")
	for _, output := range []string{"report.md", elsewhere} {
		if got := gitCommit(ctx, output); got != head+"-dirty" {
			t.Errorf("code changed, report %s: gitCommit = %q, want %q", output, got, head+"-dirty")
		}
	}
}
