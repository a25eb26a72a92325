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
	},
	Handle: func(store *idem.Store, scope func(r *http.Request) (string, error), work idem.Work) http.Handler {
		keys := idemhttp.New(idemhttp.Options{Store: store, Scope: scope})
		mux := http.NewServeMux()
		mux.Handle("POST /things", keys.Handle(work))
		return mux
	},
	Form: func(o idemhttp.FormOptions, h idemtest.FormHandler) (http.Handler, *idem.Form, error) {
		form, err := idemhttp.NewForm(o)
		if err != nil {
			return nil, nil, err
		}
		mux := http.NewServeMux()
		mux.HandleFunc("/send", func(w http.ResponseWriter, r *http.Request) {
			err := h(w, r, func() (idem.FormKey, error) { return form.Key(w, r) },
				func(fields []string, work idem.Work) error { return form.Submit(w, r, fields, work) },
				func(err error) bool { return form.WriteError(w, r, err) })
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
			}
		})
		mux.Handle("GET /send/status", form.StatusHandler())
		return mux, form.Core(), nil
	},
}

func TestConformance(t *testing.T) { idemtest.Conformance(t, netHTTP) }
