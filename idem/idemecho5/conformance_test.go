package idemecho5_test

import (
	"log/slog"
	"net/http"
	"testing"

	"github.com/labstack/echo/v5"

	"exactlyonce/idem"
	"exactlyonce/idem/idemecho5"
	"exactlyonce/idem/idemhttp"
	"exactlyonce/idem/idemtest"
)

// echoV5 is the Echo v5 adapter as the conformance suite drives it: a route
// under Keys.Middleware whose handler's and Scope's errors go to Echo,
// answered by ErrorHandler in front of the application's handler, which
// logs what reaches it and hands it to Echo's default.
var echoV5 = idemtest.Adapter{Name: "echo/v5",
	Protect: func(store *idem.Store, scope func(r *http.Request) (string, error), log *slog.Logger, h idemtest.Handler) http.Handler {
		e := echo.New()
		e.HTTPErrorHandler = idemecho5.ErrorHandler(func(c *echo.Context, err error) {
			log.Error("request failed", "err", err)
			echo.DefaultHTTPErrorHandler(false)(c, err)
		})
		keys := idemecho5.New(idemecho5.Options{Store: store,
			Scope: func(c *echo.Context) (string, error) { return scope(c.Request()) }})
		e.POST("/things", func(c *echo.Context) error {
			return h(c.Response(), c.Request(), func(work idem.Work) error { return idemecho5.Do(c, work) }, idemecho5.LockOf(c))
		}, keys.Middleware())
		return e
	},
	Handle: func(store *idem.Store, scope func(r *http.Request) (string, error), work idem.Work) http.Handler {
		e := echo.New()
		e.HTTPErrorHandler = idemecho5.ErrorHandler(echo.DefaultHTTPErrorHandler(false))
		keys := idemecho5.New(idemecho5.Options{Store: store, Scope: func(c *echo.Context) (string, error) { return scope(c.Request()) }})
		e.POST("/things", keys.Handle(work))
		return e
	},
	Form: func(o idemhttp.FormOptions, h idemtest.FormHandler) (http.Handler, *idem.Form, error) {
		eo := idemecho5.FormOptions{FormOptions: o.FormOptions, StatusPath: o.StatusPath, Layout: o.Layout, StartOver: o.StartOver}
		if o.Visitor != nil {
			eo.Visitor = func(c *echo.Context) (string, error) { return o.Visitor(c.Response(), c.Request()) }
		}
		form, err := idemecho5.NewForm(eo)
		if err != nil {
			return nil, nil, err
		}
		e := echo.New()
		route := func(c *echo.Context) error {
			return h(c.Response(), c.Request(), func() (idem.FormKey, error) { return form.Key(c) },
				func(fields []string, work idem.Work) error { return form.Submit(c, fields, work) },
				func(err error) bool { return form.WriteError(c, err) })
		}
		e.GET("/send", route)
		e.POST("/send", route)
		e.GET("/send/status", form.StatusHandler())
		return e, form.Core(), nil
	},
}

func TestConformance(t *testing.T) { idemtest.Conformance(t, echoV5) }
