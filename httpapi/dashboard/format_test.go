package dashboard

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

func TestShortIDsDifferForIDsMadeTogether(t *testing.T) {
	t.Parallel()
	a, b := uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7())
	if short(a) == short(b) || len(short(a)) != 8 {
		t.Errorf("short ids of two UUIDv7 made together: got %q and %q, want 8 digits each, different", short(a), short(b))
	}
}

func TestWhenShowsUTCAndMachineTime(t *testing.T) {
	t.Parallel()
	got := string(when(time.Date(2026, 11, 25, 10, 15, 30, 123e6, time.FixedZone("SAST", 2*3600))))
	for _, want := range []string{`datetime="2026-11-25T08:15:30.123Z"`, `title="2026-11-25 08:15:30 UTC"`, `>2026-11-25 08:15 UTC<`} {
		if !strings.Contains(got, want) {
			t.Errorf("when: got %s, want it to contain %s", got, want)
		}
	}
}

func TestPasswordHash(t *testing.T) {
	t.Parallel()
	hash := hashPassword("correct horse battery")
	if !strings.HasPrefix(hash, "$argon2id$v=19$m=19456,t=2,p=1$") || hash == hashPassword("correct horse battery") {
		t.Fatalf("hash: got %q, want a salted argon2id PHC string", hash)
	}
	if !checkPassword(hash, "correct horse battery") {
		t.Errorf("the right password: got no match")
	}
	for _, bad := range []string{"correct horse batterY", ""} {
		if checkPassword(hash, bad) {
			t.Errorf("password %q: got a match, want none", bad)
		}
	}
	if checkPassword("$2a$10$notargon", "correct horse battery") || checkPassword(strings.Replace(hash, "$v=19$", "$v=18$", 1), "correct horse battery") {
		t.Errorf("a malformed hash: got a match, want none")
	}
}

func TestFlashOpensOnlyForItsSession(t *testing.T) {
	t.Parallel()
	sealed := sealFlash("session-a", "lk_1", "lsk_secret")
	if k, s, ok := openFlash("session-a", sealed); !ok || k != "lk_1" || s != "lsk_secret" {
		t.Errorf("same session: got %q %q %v, want the key and secret", k, s, ok)
	}
	if _, _, ok := openFlash("session-b", sealed); ok {
		t.Errorf("another session: got it opened, want refused")
	}
	if _, _, ok := openFlash("session-a", sealed[:len(sealed)-2]+"AA"); ok {
		t.Errorf("a tampered flash: got it opened, want refused")
	}
}
