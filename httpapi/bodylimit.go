package httpapi

import (
	"net/http"

	"github.com/gorilla/mux"
)

// bodyLimit is the most a route takes in a request body, and its answer
// to a larger one.
type bodyLimit struct {
	bytes    int64
	tooLarge error
}

var (
	jsonBodyLimit   = bodyLimit{maxJSONBody, errBodyTooLarge}
	uploadBodyLimit = bodyLimit{maxRequestBody, errFileTooLarge}
)

// uploadRoute marks a route that takes a multipart upload (up to
// maxRequestBody), so that middleware reading the body before the route
// (idempotent) applies the route's limit; the others take JSON bodies.
type uploadRoute struct{ http.Handler }

// routeBodyLimit is the body limit of the route r matched.
func routeBodyLimit(r *http.Request) bodyLimit {
	if cr := mux.CurrentRoute(r); cr != nil {
		if _, ok := cr.GetHandler().(uploadRoute); ok {
			return uploadBodyLimit
		}
	}
	return jsonBodyLimit
}
