package httpapi

import (
	"bytes"
	"errors"
	"io"
	"net/http"

	"github.com/ledger/ledger/domain"
)

// DefaultMaxBufferedBytes is Config.MaxBufferedBytes when unset.
const DefaultMaxBufferedBytes = 64 << 20

// MinBufferedBytes is the least Config.MaxBufferedBytes may be: one
// request of the largest size, so that a keyed upload can ever be held.
const MinBufferedBytes = maxRequestBody

// heldChunk is the most of a body read into one piece of memory: a body
// is held in pieces, each counted against the ceiling as it is allocated,
// rather than in one buffer that doubles as it grows.
const heldChunk = 64 << 10

// errServerBusy answers a request whose body would take the process past
// its ceiling on request bytes held at once (Config.MaxBufferedBytes):
// many large bodies held at once would otherwise grow the process until
// the machine runs out of memory. Nothing was done; the retry may be sent
// with the same Idempotency-Key.
var errServerBusy = domain.Errorf(domain.Unavailable, "server_busy",
	"the server is holding as many request bodies as it can; retry shortly, with the same Idempotency-Key")

// heldBody is a request body read into memory, in chunks, counted against
// the process's ceiling until release.
type heldBody struct {
	s      *Server
	chunks [][]byte
	weight int64 // bytes counted against the ceiling
}

// holdBody reads r's body into memory, at most limit.bytes (limit.tooLarge
// beyond, at once when Content-Length says so), and writes it to sink as
// it comes. Each chunk is counted against the ceiling before it is
// allocated: errServerBusy when the ceiling would be passed. On an error
// nothing stays held; otherwise the caller must release the body.
func (s *Server) holdBody(r *http.Request, limit bodyLimit, sink io.Writer) (*heldBody, error) {
	if r.ContentLength > limit.bytes {
		return nil, limit.tooLarge
	}
	b := &heldBody{s: s}
	var size int64
	for {
		// One byte over the limit tells a body too large; one over the
		// announced length reads its end without a chunk to spare.
		want := min(heldChunk, limit.bytes+1-size)
		if r.ContentLength >= 0 {
			want = min(want, r.ContentLength+1-size)
		}
		if !s.held.TryAcquire(want) {
			b.release()
			return nil, errServerBusy
		}
		b.weight += want
		s.metrics.held.Add(float64(want))
		chunk := make([]byte, want)
		n, err := fill(r.Body, chunk)
		b.chunks = append(b.chunks, chunk[:n])
		sink.Write(chunk[:n])
		size += int64(n)
		switch {
		case size > limit.bytes:
			err = limit.tooLarge
		case errors.Is(err, io.EOF):
			return b, nil
		case errors.Is(err, errBodyTooSlow):
		case err != nil:
			err = domain.Errorf(domain.Invalid, "unreadable_body", "the request body could not be read")
		}
		if err != nil {
			b.release()
			return nil, err
		}
	}
}

// fill reads from r until p is full or r fails. Unlike io.ReadFull it
// returns io.EOF as it came, so that a body's end is told apart from a
// connection closed before Content-Length was reached
// (io.ErrUnexpectedEOF).
func fill(r io.Reader, p []byte) (int, error) {
	n := 0
	for n < len(p) {
		k, err := r.Read(p[n:])
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// reader returns the held body from its start.
func (b *heldBody) reader() io.ReadCloser {
	readers := make([]io.Reader, len(b.chunks))
	for i, c := range b.chunks {
		readers[i] = bytes.NewReader(c)
	}
	return io.NopCloser(io.MultiReader(readers...))
}

// release gives the body's bytes back to the ceiling.
func (b *heldBody) release() {
	b.chunks = nil
	b.s.held.Release(b.weight)
	b.s.metrics.held.Sub(float64(b.weight))
	b.weight = 0
}
