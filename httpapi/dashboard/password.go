package dashboard

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"runtime"
	"strings"
	"sync"

	"golang.org/x/crypto/argon2"
)

// Dashboard passwords are hashed with argon2id (RFC 9106) at OWASP's
// minimum settings (19 MiB, 2 passes, 1 lane): memory-hard, so a stolen
// hash is expensive to guess at, yet a sign-in costs one hash, which users
// do not notice (docs/performance.md, "Dashboard"). The PHC string
// records the parameters, so they can be raised without breaking old hashes.
const (
	argonTime    = 2
	argonMemory  = 19 * 1024 // KiB
	argonThreads = 1
	argonKeyLen  = 32
)

// argonSlots bounds the argon2 computations running at once in this
// process. Each takes 19 MiB (more for a stored hash with higher settings),
// and sign-in needs no account, so unbounded parallel attempts would grow
// the process by that much each, to gigabytes (docs/performance.md,
// "Dashboard"). Beyond the bound they wait their turn, each holding a
// goroutine, not a hash's memory.
var argonSlots = make(chan struct{}, max(2, runtime.GOMAXPROCS(0)))

// argonKey is argon2.IDKey within argonSlots.
func argonKey(password, salt []byte, time, memory uint32, threads uint8, keyLen uint32) []byte {
	argonSlots <- struct{}{}
	defer func() { <-argonSlots }()
	return idKey(password, salt, time, memory, threads, keyLen)
}

// idKey is argon2.IDKey (a variable so a test can watch the calls overlap).
var idKey = argon2.IDKey

// hashPassword returns password's argon2id hash in PHC string format.
func hashPassword(password string) string {
	salt := make([]byte, 16)
	rand.Read(salt)
	key := argonKey([]byte(password), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemory, argonTime, argonThreads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key))
}

// checkPassword reports whether password matches a hash from hashPassword.
// A malformed hash matches nothing.
func checkPassword(hash, password string) bool {
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false
	}
	var version int
	var memory, time uint32
	var threads uint8
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &memory, &time, &threads); err != nil {
		return false
	}
	salt, err1 := base64.RawStdEncoding.DecodeString(parts[4])
	want, err2 := base64.RawStdEncoding.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(want) == 0 {
		return false
	}
	got := argonKey([]byte(password), salt, time, memory, threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1
}

// dummyHash is checked against when an email has no account, so a wrong
// email takes as long as a wrong password and does not reveal which it was.
var dummyHash = sync.OnceValue(func() string { return hashPassword(randomToken()) })
