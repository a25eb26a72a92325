package web

import (
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"
)

// RouteSet is a face of the server (the browser pages, the JSON API) whose
// routes all answer their errors the same way (answer: asPage, or
// answersWith(writeProblem)). Echo's own answer to a method a path does not
// serve is a 405 made by the router, before any route's middleware runs,
// and so before answer could word it for the face's audience; worse, a
// catch-all route ("/*", "/api/*") wins over that 405 and turns it into a
// 404. The set therefore answers those methods itself
// (RefuseOtherMethods).
type RouteSet struct {
	e      *echo.Echo
	answer echo.MiddlewareFunc
	// served lists the methods of each path, in the order paths were added.
	served map[string][]string
	paths  []string
}

func NewRouteSet(e *echo.Echo, answer echo.MiddlewareFunc) *RouteSet {
	return &RouteSet{e: e, answer: answer, served: map[string][]string{}}
}

// Add registers a route, answer first so that it also answers the errors
// of mw.
func (s *RouteSet) Add(method, path string, h echo.HandlerFunc, mw ...echo.MiddlewareFunc) {
	s.e.Add(method, path, h, append([]echo.MiddlewareFunc{s.answer}, mw...)...)
	if _, ok := s.served[path]; !ok {
		s.paths = append(s.paths, path)
	}
	s.served[path] = append(s.served[path], method)
}

// RefusedMethodRoute and OptionsRoute name the routes that only answer
// 405, and OPTIONS, so that a listing of what the server serves can leave
// them out.
const (
	RefusedMethodRoute = "method-not-allowed"
	OptionsRoute       = "options"
)

// refusedMethods are the methods a path answers 405 for itself.
var refusedMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut,
	http.MethodPatch, http.MethodDelete, http.MethodConnect, http.MethodTrace}

// RefuseOtherMethods registers, for every path added, a 405 with its Allow
// header for the methods the path does not serve, and an answer to OPTIONS
// (which the Allow header lists, so it must work: the catch-all would
// otherwise answer it 404). It runs after the last Add.
func (s *RouteSet) RefuseOtherMethods() {
	for _, path := range s.paths {
		served := s.served[path]
		allow := strings.Join(append(slices.Clone(served), http.MethodOptions), ", ")
		for _, m := range refusedMethods {
			if !slices.Contains(served, m) {
				s.e.Add(m, path, methodNotAllowed(allow), s.answer).Name = RefusedMethodRoute
			}
		}
		s.e.Add(http.MethodOptions, path, options(allow), s.answer).Name = OptionsRoute
	}
}

// options answers OPTIONS with the methods the path serves (RFC 9110,
// section 9.3.7): 204 and the Allow header, no body.
func options(allow string) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Response().Header().Set(echo.HeaderAllow, allow)
		return c.NoContent(http.StatusNoContent)
	}
}
