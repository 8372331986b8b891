package httpapi

import (
	"fmt"

	"github.com/gorilla/mux"
)

// Route is one operation the router serves: a method on a path template.
type Route struct {
	Method string
	Path   string // the mux template, e.g. /users/{userId}
	Public bool   // served without a token: registered outside the authenticated subrouter
}

// Routes lists every operation of the router, so tests can hold each one to
// the contract (openapi.json, the access matrix) and a new route cannot be
// forgotten. A route that names no methods is an error: it would answer
// every method, which no contract row describes.
func (s *Server) Routes() ([]Route, error) {
	var routes []Route
	err := s.router.Walk(func(route *mux.Route, router *mux.Router, _ []*mux.Route) error {
		tpl, err := route.GetPathTemplate()
		if err != nil {
			return nil // a subrouter's mount point: its routes are walked next
		}
		methods, err := route.GetMethods()
		if err != nil {
			return fmt.Errorf("route %s names no methods", tpl)
		}
		for _, m := range methods {
			routes = append(routes, Route{Method: m, Path: tpl, Public: router == s.router})
		}
		return nil
	})
	return routes, err
}
