package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestChaosClientRequestCutByTheLoadsEndIsNoAnswer checks that a request
// still waiting when the load stops comes back as an error, not as a zero
// answer: its caller checks for a status of 300 or more, and a zero
// status read as acknowledged once counted a DELETE that never happened
// (the nats scenario's "acknowledged momo removals undone").
func TestChaosClientRequestCutByTheLoadsEndIsNoAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // never answers
	}))
	defer srv.Close()
	c := &chaosClient{http: srv.Client(), urls: []string{srv.URL}, patience: time.Minute}

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	a, err := c.do(ctx, http.MethodDelete, "/profile/momo/x", "token", nil)
	if err == nil {
		t.Fatalf("do = status %d and no error, want an error for a request the load's end cut off", a.Status)
	}
	if got := c.snapshot().NoAnswer; got == 0 {
		t.Error("the cut-off attempt is not counted as no answer")
	}
}

// TestChaosClientSkipsAnInstanceThatDoesNotAnswer checks that a request
// finding an instance down goes straight on to the next one: with no
// patience left for waits, it is answered by the live instance only if the
// dead one cost no wait in between.
func TestChaosClientSkipsAnInstanceThatDoesNotAnswer(t *testing.T) {
	live := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
	}))
	defer live.Close()
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close() // its port now refuses connections
	// The first attempt goes to urls[1]: the dead one.
	c := &chaosClient{http: live.Client(), urls: []string{live.URL, dead.URL}, patience: 0}

	a, err := c.do(context.Background(), http.MethodGet, "/users/x", "token", nil)
	if err != nil || a.Status != http.StatusOK {
		t.Fatalf("do = status %d, %v; want the live instance's 200 right after the dead one's refusal", a.Status, err)
	}
	if got := c.snapshot().NoAnswer; got != 1 {
		t.Errorf("attempts without an answer: got %d, want 1 (the dead instance)", got)
	}
}
