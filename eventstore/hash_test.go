package eventstore

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ledger/ledger/domain"
)

// TestHashMatchesReference checks that Hash's direct canonical encoding
// gives the bytes of the documented formula (encode the envelope, then
// JCS), on records whose strings and data hold what JSON escaping and JCS
// treat specially.
func TestHashMatchesReference(t *testing.T) {
	t.Parallel()
	if !envelopeShapeKnown {
		t.Fatalf("domain.CloudEvent is now %v: update hashCanonical and envelopeShape (until then Hash uses the slow reference)", cloudEventShape())
	}
	tricky := []string{"", "plain", `quote " and \ backslash`, "<script>&amp;</script>", "line\nbreak\ttab\rcr\bbs\fff",
		"\x00\x01\x1f\x7f", "\u2028\u2029", "héllo wörld ✓ 🚀", "\xff\xfeinvalid\xc3", "a\u00e9\U0001F600z", "/slash/"}
	datas := []string{`{"a":1}`, `{"z": 1.0, "a": [1e3, -0, 0.1, 123456789012345678901234], "é": "\u00e9", "\u20ac": "<>&", "b": {"y": null, "x": true}}`,
		`{"s": "\u2028 \ud83d\ude00 \u0007"}`, `[]`, `"just a string"`, `{"apiKey":"k","secretHash":"` + strings.Repeat("ab", 32) + `"}`}
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func() string { return tricky[rng.IntN(len(tricky))] }
	for i := range 2000 {
		r := domain.Record{
			ID: uuid.New(), TenantID: uuid.New(), StreamType: []string{"tenant", "user", pick()}[i%3], StreamID: uuid.New(),
			StreamVersion: rng.IntN(1 << 20), Type: "tenant." + pick(), SchemaVersion: 1 + rng.IntN(3),
			Data:       []byte(datas[rng.IntN(len(datas))]),
			Meta:       domain.Metadata{Actor: pick(), RequestID: pick(), CorrelationID: pick(), CausationID: pick()},
			RecordedAt: time.Unix(rng.Int64N(4e9), rng.Int64N(1e9)), Position: rng.Int64N(1 << 53), Hash: pick(), PrevHash: pick(),
		}
		prev := []string{GenesisHash, strings.Repeat("ab", 32)}[i%2]
		got, err := Hash(prev, r)
		if err != nil {
			t.Fatalf("hash %+v: %v", r, err)
		}
		want, err := hashReference(prev, domain.Envelope(r))
		if err != nil {
			t.Fatalf("reference hash %+v: %v", r, err)
		}
		if got != want {
			t.Fatalf("record %+v: got hash %s, want the reference %s", r, got, want)
		}
	}
}

func BenchmarkHash(b *testing.B) {
	tenant := uuid.New()
	rec, err := domain.NewRecord(domain.StreamRef{TenantID: tenant, Type: "tenant", ID: tenant}, 3,
		newKey(), domain.Metadata{Actor: "system:ledgerbench"}, uuid.New(), time.Now())
	if err != nil {
		b.Fatal(err)
	}
	rec.Position = 12345
	for b.Loop() {
		if _, err := Hash(GenesisHash, rec); err != nil {
			b.Fatal(err)
		}
	}
}
