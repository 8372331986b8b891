package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestLogLinesAboutNamesTheFile checks that the lines kept for an
// unexplained repeat are those naming its webhook, each with its log.
func TestLogLinesAboutNamesTheFile(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "ledgerd-1.log"), filepath.Join(dir, "ledgerd-2.log")
	for path, body := range map[string]string{
		a: `{"msg":"webhooks: record attempt","event":"e1","err":"x"}` + "\n" + `{"msg":"relay: stepping down"}` + "\n",
		b: `{"msg":"webhooks: claim"}` + "\n" + `{"msg":"webhooks: record attempt","event":"e2"}` + "\n",
	} {
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := logLinesAbout([]string{a, b, filepath.Join(dir, "gone.log")}, []string{"e1", "e2"}, 10)
	want := []string{`ledgerd-1.log: {"msg":"webhooks: record attempt","event":"e1","err":"x"}`,
		`ledgerd-2.log: {"msg":"webhooks: record attempt","event":"e2"}`}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	if got := logLinesAbout([]string{a, b}, []string{"e1", "e2"}, 1); len(got) != 1 {
		t.Fatalf("limit 1: got %d lines", len(got))
	}
}
