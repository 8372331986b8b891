package dashboard

import (
	"io/fs"
	"net/http"
	"strings"
)

// static serves GET /dashboard/static/: the embedded files, and for a
// directory 404 rather than a listing of what is there.
func (d *Dashboard) static(w http.ResponseWriter, r *http.Request) error {
	name := strings.TrimPrefix(r.URL.Path, "/dashboard/")
	if fi, err := fs.Stat(staticFS, name); err != nil || fi.IsDir() {
		return errNotFound
	}
	http.ServeFileFS(w, r, staticFS, name)
	return nil
}
