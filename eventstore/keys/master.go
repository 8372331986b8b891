package keys

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Envelope encryption: the signing and sealing keys are stored wrapped
// (AES-256-GCM) under a key-encryption key, the master key, which never
// enters the database: it is a file of 32 random bytes on each host
// (LEDGER_MASTER_KEY_FILE). A dump of the database alone then holds no
// usable secret. Each wrapped key is stored with the id of the master key
// that wrapped it, so that during a change of master key (ledgerctl keys
// rotate-master) a process holding both opens either.

// masterKeySize is the length of a master key file: 32 random bytes.
const masterKeySize = 32

// MasterKeys are the master keys a process holds: the first wraps, every
// one unwraps (several only while the master key changes).
type MasterKeys struct {
	ids  []string // ids[0] wraps
	byID map[string]cipher.AEAD
}

// ErrMasterKey means a stored key is wrapped with a master key this
// process does not hold, or its wrapping was altered.
var ErrMasterKey = errors.New("keys: stored key cannot be unwrapped with the master keys given")

// NewMasterKeys returns the master keys keks (each 32 bytes); the first
// wraps.
func NewMasterKeys(keks ...[]byte) (*MasterKeys, error) {
	if len(keks) == 0 {
		return nil, errors.New("no master key")
	}
	m := &MasterKeys{byID: map[string]cipher.AEAD{}}
	for _, kek := range keks {
		if len(kek) != masterKeySize {
			return nil, fmt.Errorf("a master key is %d bytes, not %d", masterKeySize, len(kek))
		}
		block, err := aes.NewCipher(kek)
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		id := masterKeyID(kek)
		if _, dup := m.byID[id]; !dup {
			m.ids = append(m.ids, id)
		}
		m.byID[id] = aead
	}
	return m, nil
}

// ReadMasterKeyFiles reads master key files (32 bytes each); the first wraps.
func ReadMasterKeyFiles(paths ...string) (*MasterKeys, error) {
	keks := make([][]byte, len(paths))
	for i, path := range paths {
		kek, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("master key: %w", err)
		}
		if len(kek) != masterKeySize {
			return nil, fmt.Errorf("master key %s: %d bytes, want %d random bytes (head -c 32 /dev/urandom > %s)", path, len(kek), masterKeySize, path)
		}
		keks[i] = kek
	}
	return NewMasterKeys(keks...)
}

// LocalMasterKeyFile returns the master key file under dir, creating it
// with 32 random bytes if there is none (created says so). It is the
// sandbox's: on one host, beside the rest of its local state. Two
// processes creating it at once end up with the same file.
func LocalMasterKeyFile(dir string) (path string, created bool, err error) {
	path = filepath.Join(dir, "master.key")
	if _, err := os.Stat(path); err == nil {
		return path, false, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", false, fmt.Errorf("master key: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "master.key.*")
	if err != nil {
		return "", false, fmt.Errorf("master key: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(randomBytes(masterKeySize))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", false, fmt.Errorf("master key: %w", err)
	}
	// A link does not replace an existing file: the first process's key
	// stays, and the others read it.
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, os.ErrExist) {
			return path, false, nil
		}
		return "", false, fmt.Errorf("master key: %w", err)
	}
	return path, true, nil
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

// masterKeyID names a master key without revealing it.
func masterKeyID(kek []byte) string {
	m := hmac.New(sha256.New, kek)
	m.Write([]byte("ledger master key id"))
	return hex.EncodeToString(m.Sum(nil)[:8])
}

// ID is the id of the master key that wraps.
func (m *MasterKeys) ID() string { return m.ids[0] }

// IDs are the ids of every master key held.
func (m *MasterKeys) IDs() []string { return m.ids }

// has tells whether m holds the master key id.
func (m *MasterKeys) has(id string) bool {
	_, ok := m.byID[id]
	return ok
}

// Wrap encrypts secret for the row named by aad (table and key id, so a
// wrapped key opens in its own row only), with the first master key.
func (m *MasterKeys) Wrap(aad string, secret []byte) (kekID string, wrapped []byte) {
	aead := m.byID[m.ids[0]]
	nonce := randomBytes(aead.NonceSize())
	return m.ids[0], aead.Seal(nonce, nonce, secret, []byte(aad))
}

// Unwrap decrypts what Wrap wrote for aad under master key kekID.
func (m *MasterKeys) Unwrap(kekID, aad string, wrapped []byte) ([]byte, error) {
	aead, ok := m.byID[kekID]
	if !ok {
		return nil, fmt.Errorf("%w: %s is wrapped with master key %s; these are %v", ErrMasterKey, aad, kekID, m.ids)
	}
	if len(wrapped) < aead.NonceSize() {
		return nil, fmt.Errorf("%w: %s is cut short", ErrMasterKey, aad)
	}
	secret, err := aead.Open(nil, wrapped[:aead.NonceSize()], wrapped[aead.NonceSize():], []byte(aad))
	if err != nil {
		return nil, fmt.Errorf("%w: %s does not open under master key %s", ErrMasterKey, aad, kekID)
	}
	return secret, nil
}

// signingKeyAAD and serverKeyAAD bind a wrapped key to its row.
func signingKeyAAD(kid string) string    { return "signing_keys " + kid }
func serverKeyAAD(purpose string) string { return "server_keys " + purpose }

// SealingKeyAAD binds a wrapped sealing key to its row in sealing_keys.
// Package sealing stores those keys; the binding is here because
// WrapStoredKeys and RewrapKeys wrap the keys of every table.
func SealingKeyAAD(kid string) string { return "sealing_keys " + kid }
