package httpapi

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestReplacingWriterMatchesReplaceAll: however a body is split into
// writes, what comes out is bytes.ReplaceAll of the whole, so a request's
// hash does not depend on how its bytes arrived (nor changed from when
// the body was hashed whole).
func TestReplacingWriterMatchesReplaceAll(t *testing.T) {
	t.Parallel()
	old, repl := []byte("--abcabd"), []byte("--X")
	bodies := [][]byte{
		nil,
		[]byte("--abcabd"),
		[]byte("--abcabc--abcabd--abcabd-"),
		[]byte("-----abcabd--abcab--abcabd"),
		[]byte("no boundary at all"),
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		b := make([]byte, rng.IntN(80))
		for i := range b {
			b[i] = "-abcd"[rng.IntN(5)]
		}
		bodies = append(bodies, b)
	}
	for _, body := range bodies {
		want := bytes.ReplaceAll(body, old, repl)
		for range 20 {
			var got bytes.Buffer
			w := &replacingWriter{w: &got, old: old, new: repl}
			for rest := body; len(rest) > 0; {
				n := min(len(rest), rng.IntN(10))
				w.Write(rest[:n])
				rest = rest[n:]
			}
			w.Close()
			if !bytes.Equal(got.Bytes(), want) {
				t.Fatalf("%q in pieces: got %q, want %q", body, got.Bytes(), want)
			}
		}
	}
}
