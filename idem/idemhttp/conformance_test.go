package idemhttp_test

import (
	"log/slog"
	"net/http"
	"testing"

	"exactlyonce/idem"
	"exactlyonce/idem/idemhttp"
	"exactlyonce/idem/idemtest"
)

// netHTTP is the net/http adapter as the conformance suite drives it: a
// ServeMux route under Keys.Middleware, whose refusals and Scope errors are
// answered by the default Refuse (logging to Options.Log what is not a
// refusal), and whose handler answers its own errors as an application
// does: logged, then WriteError.
var netHTTP = idemtest.Adapter{Name: "net/http",
	Protect: func(store *idem.Store, scope func(r *http.Request) (string, error), log *slog.Logger, h idemtest.Handler) http.Handler {
		keys := idemhttp.New(idemhttp.Options{Store: store, Scope: scope, Log: log})
		mux := http.NewServeMux()
		mux.Handle("POST /things", keys.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if err := h(w, r, func(work idem.Work) error { return idemhttp.Do(w, r, work) }, idemhttp.LockOf(r.Context())); err != nil {
				if _, ok := idem.RefusalOf(err); !ok {
					log.Error("request failed", "err", err)
				}
				idemhttp.WriteError(w, r, err)
			}
		})))
		return mux
	}}

func TestConformance(t *testing.T) { idemtest.Conformance(t, netHTTP) }
