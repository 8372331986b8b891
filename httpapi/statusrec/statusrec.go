// Package statusrec records the status a handler answered with, for the
// request logs and metrics of the API and the dashboard.
package statusrec

import "net/http"

// Recorder is an http.ResponseWriter that remembers the first status
// written through it.
type Recorder struct {
	http.ResponseWriter
	status int
}

func (w *Recorder) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *Recorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (flushes and
// deadlines, which the dashboard's live stream and body pacing use).
func (w *Recorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Status is the status the client got: 200 when the handler wrote
// nothing, as net/http then answers.
func (w *Recorder) Status() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}
