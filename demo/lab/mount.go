package lab

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"exactlyonce/demo/lab/labdb"
	"exactlyonce/internal/app"
	"exactlyonce/internal/checkout"
	"exactlyonce/internal/handlers"
)

// Demo mounts the double-click lab on the shop (app.Demo): its runner,
// whose scenarios freeze attempts through the engine's hooks and crash
// loyalty jobs through the worker's, its pages and JSON routes, and the
// short locks its requests ask for (LockOverride). The runner is App.Demo
// after New, for tests.
type Demo struct {
	// Runner is the lab's runner, once mounted.
	Runner *Runner
}

// Mount implements app.Demo.
func (m *Demo) Mount(s app.DemoShop) app.Mounted {
	control := Control{Base: s.StripeAPIBase, Secret: s.StripeSecretKey}
	r := New(s.BaseURL, s.DB, control, Limits{LockTimeout: s.LockTimeout, ProviderTimeout: s.ProviderTimeout,
		AuthenticationWindow: s.AuthenticationWindow}, s.Log)
	m.Runner = r
	q := labdb.New(s.DB.Conn())
	pages := NewPages(r, func(ctx context.Context) (int64, int64, error) {
		st, err := q.DemoStats(ctx)
		return st.Refunds, st.KeysParked, err
	}, s.AdminURL, handlers.CSRFToken)
	api := NewAPI(control, func(ctx context.Context) (map[string]int64, error) {
		st, err := q.DemoStats(ctx)
		return map[string]int64{"orders": st.Orders, "keys_started": st.KeysStarted, "keys_finished": st.KeysFinished,
			"keys_parked": st.KeysParked, "refunds": st.Refunds}, err
	})
	return app.Mounted{
		Hooks:      checkout.Hooks{BeforeRenew: r.Stall, BeforeFence: r.Stall, BeforeFinish: r.Stall},
		AfterAward: r.CrashAfterAward,
		Middleware: []echo.MiddlewareFunc{LockOverride},
		Pages:      pages.Register,
		API:        api.Register,
		Inspector:  "/lab",
		Inspects: func(ctx context.Context, customer uuid.UUID) bool {
			_, err := r.Inspect(ctx, customer, "")
			return !errors.Is(err, ErrNotLabShopper)
		},
	}
}
