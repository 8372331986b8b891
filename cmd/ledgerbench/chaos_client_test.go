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
