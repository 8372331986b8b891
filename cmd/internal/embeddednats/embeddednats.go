// Package embeddednats is what ledgerd's embedded NATS server and ledgerctl
// agree on: where the server listens by default and the token its clients
// authenticate with, kept under LEDGER_DATA_DIR. A ledgerctl run beside a
// default ledgerd (same working directory, no NATS_URL) so finds the
// server and gets in.
package embeddednats

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Defaults of LEDGER_EMBEDDED_NATS_ADDR and LEDGER_DATA_DIR.
const (
	DefaultAddr    = "127.0.0.1:4223" // never 4222, a standalone server's port
	DefaultDataDir = "./.ledger"
)

// TokenPath is the file holding the token of the server whose data is in dataDir.
func TokenPath(dataDir string) string { return filepath.Join(dataDir, "nats-token") }

// LoadOrCreateToken returns the token kept in dataDir, creating a random
// one (mode 0600, in a directory of mode 0700) on the first start, so
// restarts and ledgerctl keep finding the same one.
func LoadOrCreateToken(dataDir string) (string, error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return "", fmt.Errorf("embedded NATS token: %w", err)
	}
	path := TokenPath(dataDir)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return ReadToken(dataDir)
	}
	if err != nil {
		return "", fmt.Errorf("embedded NATS token: %w", err)
	}
	token := rand.Text()
	_, err = f.WriteString(token + "\n")
	if err = errors.Join(err, f.Sync(), f.Close()); err != nil {
		os.Remove(path)
		return "", fmt.Errorf("embedded NATS token: write %s: %w", path, err)
	}
	return token, nil
}

// ReadToken returns the token kept in dataDir.
func ReadToken(dataDir string) (string, error) {
	raw, err := os.ReadFile(TokenPath(dataDir))
	if err != nil {
		return "", fmt.Errorf("embedded NATS token: %w", err)
	}
	token := strings.TrimSpace(string(raw))
	if token == "" {
		return "", fmt.Errorf("embedded NATS token: %s is empty", TokenPath(dataDir))
	}
	return token, nil
}
