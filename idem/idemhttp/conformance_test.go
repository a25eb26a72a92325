package idemhttp_test

import (
	"net/http"
	"testing"

	"exactlyonce/idem"
	"exactlyonce/idem/idemhttp"
	"exactlyonce/idem/idemtest"
)

// netHTTP is the net/http adapter as the conformance suite drives it: a
// ServeMux route under Keys.Middleware, whose handler's error is answered
// with WriteError, as Keys.Handle answers one.
var netHTTP = idemtest.Adapter{Name: "net/http",
	Protect: func(store *idem.Store, scope func(r *http.Request) (string, error), h idemtest.Handler) http.Handler {
		keys := idemhttp.New(idemhttp.Options{Store: store, Scope: scope})
		mux := http.NewServeMux()
		mux.Handle("POST /things", keys.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if err := h(w, r, func(work idem.Work) error { return idemhttp.Do(w, r, work) }, idemhttp.LockOf(r.Context())); err != nil {
				idemhttp.WriteError(w, r, err)
			}
		})))
		return mux
	}}

func TestConformance(t *testing.T) { idemtest.Conformance(t, netHTTP) }
