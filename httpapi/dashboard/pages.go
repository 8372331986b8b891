package dashboard

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/google/uuid"

	"github.com/ledger/ledger/domain"
)

// pageSize is how many rows a list page shows; lists page on with the
// API's opaque offset markers.
const pageSize = 25

// nextPage is the URL of a list's next page: the current query with offset
// set to the marker, or "" on the last page.
func nextPage(r *http.Request, marker string) string {
	if marker == "" {
		return ""
	}
	q := r.URL.Query()
	q.Set("offset", marker)
	return r.URL.Path + "?" + q.Encode()
}

// pathID is the UUID of a path segment; anything else is not found.
func pathID(r *http.Request, name string) (uuid.UUID, error) {
	id, err := uuid.Parse(r.PathValue(name))
	if err != nil {
		return uuid.Nil, errNotFound
	}
	return id, nil
}

// documentLinks signs a download link for each of docs (idOf names its id). The links are
// made relative (path and query), so they download from the origin the
// page came from, whatever the configured public URL.
func documentLinks[T any](d *Dashboard, r *http.Request, docs []T, idOf func(T) uuid.UUID) (map[uuid.UUID]string, error) {
	links := make(map[uuid.UUID]string, len(docs))
	for _, doc := range docs {
		id := idOf(doc)
		link, err := d.Documents.Sign(r.Context(), id)
		if err != nil {
			return nil, err
		}
		u, err := url.Parse(link)
		if err != nil {
			return nil, fmt.Errorf("document link: %w", err)
		}
		links[id] = u.RequestURI()
	}
	return links, nil
}

// notFoundAsPage turns a read model's NotFound (absent, or another
// tenant's) into the dashboard's not-found page.
func notFoundAsPage(err error) error {
	if domain.ErrorKind(err) == domain.NotFound {
		return errNotFound
	}
	return err
}
