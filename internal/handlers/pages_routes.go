package handlers

import (
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
)

// maxFormBytes bounds a page's form; the largest, a pay form, is well
// under a kilobyte.
const maxFormBytes = "64K"

// registerPages adds the browser shop. Every page route reads the session
// and is guarded against forgery; the middleware is given per route rather
// than through a group, because a group with an empty prefix would catch
// every unknown path, the API's included.
func (h *Handler) registerPages(e *echo.Echo) {
	p := h.pageRoutes(e)
	mw := []echo.MiddlewareFunc{middleware.BodyLimit(maxFormBytes), h.loadShopper, h.csrfProtection()}
	p.add(http.MethodGet, "/", h.catalogPage, mw...)
	p.add(http.MethodGet, "/cart", h.cartPage, mw...)
	p.add(http.MethodPost, "/cart", h.setCartQuantity, mw...)
	p.add(http.MethodGet, "/checkout", h.checkoutPage, mw...)
	p.add(http.MethodPost, "/checkout", h.submitCheckout, mw...)
	p.add(http.MethodGet, "/checkout/status", h.checkoutStatus, mw...)
	p.add(http.MethodGet, "/orders", h.ordersPage, mw...)
	p.add(http.MethodGet, "/orders/:id", h.receiptPage, mw...)
	p.add(http.MethodGet, "/pickup", h.pickupPage, mw...)
	p.add(http.MethodPost, "/pickup", h.reservePickup, mw...)
	p.add(http.MethodGet, "/pickup/status", h.pickupStatus, mw...)
	p.add(http.MethodGet, "/pickup/:id", h.pickupReceipt, mw...)
	p.add(http.MethodGet, "/static/:name", h.asset)
	h.registerLab(p)
	p.refuseOtherMethods()
	// A path no route serves is a page a person mistyped, unless it is
	// under a machine client's group (which registers its own).
	e.RouteNotFound("/*", notFound, h.asPage)
}

// pages is the browser face's route group. Every route it adds answers its
// errors with a page (asPage). Echo's own answer to a method a path does
// not serve is a 405 made by the router, before any route's middleware
// runs, and so before asPage could word it for a person; the group
// therefore answers those methods itself (refuseOtherMethods).
type pages struct {
	e      *echo.Echo
	asPage echo.MiddlewareFunc
	// served lists the methods of each path, in the order paths were added.
	served map[string][]string
	paths  []string
}

func (h *Handler) pageRoutes(e *echo.Echo) *pages {
	return &pages{e: e, asPage: h.asPage, served: map[string][]string{}}
}

// add registers a page route, asPage first so that it also answers the
// errors of mw.
func (p *pages) add(method, path string, h echo.HandlerFunc, mw ...echo.MiddlewareFunc) {
	p.e.Add(method, path, h, append([]echo.MiddlewareFunc{p.asPage}, mw...)...)
	if _, ok := p.served[path]; !ok {
		p.paths = append(p.paths, path)
	}
	p.served[path] = append(p.served[path], method)
}

// pageMethods are the methods a page path answers 405 for itself. OPTIONS
// is left to Echo, which answers it with the path's Allow list.
var pageMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut,
	http.MethodPatch, http.MethodDelete, http.MethodConnect, http.MethodTrace}

// refuseOtherMethods registers, for every path added, a page 405 with its
// Allow header for the methods the path does not serve. It runs after the
// last add.
func (p *pages) refuseOtherMethods() {
	for _, path := range p.paths {
		served := p.served[path]
		allow := strings.Join(append(slices.Clone(served), http.MethodOptions), ", ")
		for _, m := range pageMethods {
			if !slices.Contains(served, m) {
				p.e.Add(m, path, methodNotAllowed(allow), p.asPage)
			}
		}
	}
}
