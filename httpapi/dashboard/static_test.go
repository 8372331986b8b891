package dashboard

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestStaticListsNoDirectory: the static files are served; their
// directory is 404, with no listing of what it holds.
func TestStaticListsNoDirectory(t *testing.T) {
	t.Parallel()
	h := newHarness(t, fakeCredentials{})
	srv := httptest.NewServer(h.d)
	t.Cleanup(srv.Close)
	get := func(path string) (int, string) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if status, body := get("/dashboard/static/dashboard.css"); status != http.StatusOK || body == "" {
		t.Errorf("GET dashboard.css: got %d, want 200 and the file", status)
	}
	for _, path := range []string{"/dashboard/static/", "/dashboard/static", "/dashboard/static/missing.css", "/dashboard/static/../static/"} {
		if status, body := get(path); status != http.StatusNotFound || strings.Contains(body, `href="dashboard.js"`) {
			t.Errorf("GET %s: got %d, want 404 naming no file:\n%.300s", path, status, body)
		}
	}
}
