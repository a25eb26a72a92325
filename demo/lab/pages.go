package lab

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"exactlyonce/demo/lab/labviews"
	"exactlyonce/internal/problem"
	"exactlyonce/internal/tracing"
	"exactlyonce/internal/web"
	"exactlyonce/views"
)

// labFragmentHeader marks the lab page script's requests, which want a
// piece of the page back instead of a redirect to all of it.
const labFragmentHeader = "Lab-Fragment"

// Pages serves the double-click lab's pages, on a demo server only (the
// app mounts them with DEMO=1; the shop's handlers know nothing of them).
type Pages struct {
	lab *Runner
	// stats reads the shop's totals for the safety-net panel.
	stats func(ctx context.Context) (refunds, parked int64, err error)
	// adminURL is the admin listener's, for the inspector's trace links;
	// empty when none.
	adminURL string
	// csrfToken is the shop's CSRF token of the request, for the forms.
	csrfToken func(echo.Context) string
}

// NewPages returns the lab's pages over runner.
func NewPages(runner *Runner, stats func(ctx context.Context) (refunds, parked int64, err error), adminURL string,
	csrfToken func(echo.Context) string) *Pages {
	return &Pages{lab: runner, stats: stats, adminURL: adminURL, csrfToken: csrfToken}
}

// Register adds the lab's routes to p, behind forms: the middleware that
// guards the shop's own forms (body limit, CSRF). It needs no shopper
// session, since every run registers a shopper of its own.
func (h *Pages) Register(p *web.RouteSet, forms ...echo.MiddlewareFunc) {
	mw := forms
	p.Add(http.MethodGet, "/lab", h.labPage, mw...)
	p.Add(http.MethodGet, "/lab/static/:name", echo.WrapHandler(labviews.Assets))
	p.Add(http.MethodPost, "/lab/run/:scenario", h.runLabScenario, mw...)
	p.Add(http.MethodGet, "/lab/live", h.labLive, mw...)
	p.Add(http.MethodGet, "/lab/inspector", h.labInspectorPanel, mw...)
	p.Add(http.MethodPost, "/lab/provider", h.setLabProvider, mw...)
}

// labPage is GET /lab: every card with its last result, the inspector and
// the fault panel. ?busy=1 is where a refused run lands without script.
// ?present=1 is presenter mode, which shows one card, the one ?card names
// (numbered from 1), and links to the cards before and after it.
func (h *Pages) labPage(c echo.Context) error {
	token := h.csrfToken(c)
	page := labviews.LabPage{CSRF: token, Faults: labFaults(token, h.lab.Provider())}
	refunds, parked, err := h.stats(c.Request().Context())
	if err != nil {
		return fmt.Errorf("demo stats: %w", err)
	}
	page.Faults.SafetyNet = labviews.LabSafetyNet{Refunds: refunds, Parked: parked}
	switch {
	case c.QueryParam("busy") != "":
		page.Notice = "Another run was in flight, so this one did not start. Try again once it has finished."
	case c.QueryParam("fault") != "":
		page.Notice = "The fault was not changed, because a run was in flight. Try again once it has finished."
	}
	page.Present = c.QueryParam("present") != ""
	page.PresentURL = "/lab?present=1"
	if n, err := strconv.Atoi(c.QueryParam("card")); err == nil && n >= 1 && n <= len(Scenarios) {
		page.Current = n - 1
	}
	live, running := h.lab.Live()
	for i, sc := range Scenarios {
		card := labviews.LabCard{
			Number: i + 1, ID: sc.ID, Title: sc.Title, Point: sc.Point, Setup: h.labSetup(sc),
			Explanation: sc.Explanation, CannotRun: h.lab.CannotRun(sc.ID),
			PresentURL: fmt.Sprintf("/lab?present=1&card=%d", i+1),
			Expect:     expectation(sc), CSRF: token, Result: labviews.LabResult{ScenarioID: sc.ID},
		}
		if running && live.Scenario == sc.ID {
			card.Result = labResult(live)
		} else if run, ok := h.lab.Last(sc.ID); ok {
			card.Result = labResult(run)
		}
		page.Cards = append(page.Cards, card)
	}
	in, err := h.labInspector(c)
	if err != nil {
		return err
	}
	page.Inspector = in
	return web.Render(c, http.StatusOK, labviews.Lab(page))
}

// runLabScenario is POST /lab/run/{scenario}, the Run button. It answers
// when the run is over: the page script gets the card's new result, a
// plain form post a redirect to the page that shows it.
func (h *Pages) runLabScenario(c echo.Context) error {
	id := c.Param("scenario")
	fragment := c.Request().Header.Get(labFragmentHeader) != ""
	run, err := h.lab.Run(c.Request().Context(), id)
	switch {
	case errors.Is(err, ErrUnknownScenario):
		return web.Fail(problem.NotFound, "no such scenario")
	case errors.Is(err, ErrCannotRun) && fragment:
		return c.String(http.StatusConflict, h.lab.CannotRun(id))
	case errors.Is(err, ErrCannotRun):
		return web.SeeOther(c, "/lab#scenario-"+id)
	case errors.Is(err, ErrBusy) && fragment:
		return c.String(http.StatusConflict, "Another run is in flight. Try again once it has finished.")
	case errors.Is(err, ErrBusy):
		return web.SeeOther(c, "/lab?busy=1#scenario-"+id)
	case err != nil:
		return err
	}
	if fragment {
		return web.Render(c, http.StatusOK, labviews.LabResultPanel(labResult(run)))
	}
	return web.SeeOther(c, "/lab#scenario-"+id)
}

// labSetup is a scenario's conditions with the provider's delay on this
// server, which its limits decide (Limits).
func (h *Pages) labSetup(sc Scenario) string {
	if d := h.lab.ProviderDelay(sc.ID); d > 0 {
		took := seconds(d)
		if d < time.Second {
			took = millis(d)
		}
		return sc.Setup + " · provider takes " + took
	}
	return sc.Setup
}

// labLive is GET /lab/live: the result panel of the run in flight, which
// the page script swaps in while it waits, or 204 when none is.
func (h *Pages) labLive(c echo.Context) error {
	run, ok := h.lab.Live()
	if !ok {
		return c.NoContent(http.StatusNoContent)
	}
	return web.Render(c, http.StatusOK, labviews.LabResultPanel(labResult(run)))
}

// labInspectorPanel is GET /lab/inspector?customer=…&key=…: the inspector
// alone, for the page script.
func (h *Pages) labInspectorPanel(c echo.Context) error {
	in, err := h.labInspector(c)
	if err != nil {
		return err
	}
	return web.Render(c, http.StatusOK, labviews.LabInspectorPanel(in))
}

// labInspector reads the shopper named by ?customer, or else (or when the
// lab no longer remembers that one) the shopper of the run in flight or of
// the last run, and the audit trail of ?key.
func (h *Pages) labInspector(c echo.Context) (labviews.LabInspector, error) {
	ctx := c.Request().Context()
	key := c.QueryParam("key")
	if id, err := uuid.Parse(c.QueryParam("customer")); err == nil {
		in, err := h.lab.Inspect(ctx, id, key)
		if err == nil {
			return h.labInspection(c, in), nil
		}
		if !errors.Is(err, ErrNotLabShopper) {
			return labviews.LabInspector{}, fmt.Errorf("inspect lab shopper: %w", err)
		}
	}
	run, ok := h.lab.Latest()
	if !ok || run.CustomerID == uuid.Nil {
		return labviews.LabInspector{PollURL: "/lab/inspector"}, nil
	}
	in, err := h.lab.Inspect(ctx, run.CustomerID, key)
	if err != nil {
		return labviews.LabInspector{}, fmt.Errorf("inspect lab shopper: %w", err)
	}
	return h.labInspection(c, in), nil
}

// labInspection names the run an inspection's shopper belongs to, and
// links its key to the key's traces on the admin listener.
func (h *Pages) labInspection(c echo.Context, in Inspection) labviews.LabInspector {
	scenario, running := "", false
	if live, ok := h.lab.Live(); ok && live.hasShopper(in.CustomerID) {
		scenario, running = live.Scenario, true
	}
	for _, sc := range Scenarios {
		if last, ok := h.lab.Last(sc.ID); ok && last.hasShopper(in.CustomerID) {
			scenario = sc.ID
		}
	}
	v := labInspection(in, scenarioTitle(scenario), running)
	if base := h.adminBase(c.Request()); base != "" && in.Key != "" {
		v.TracesURL = base + "/traces?" + url.Values{"ref": {tracing.KeyRef(in.CustomerID.String(), in.Key)}}.Encode()
	}
	return v
}

// adminBase is where the operator's browser reaches the admin listener:
// AdminURL, unless it listens on every address (ADMIN_ADDR=:9090), then
// the host the browser reached this page by, with the admin port; "" when
// there is no admin listener.
func (h *Pages) adminBase(r *http.Request) string {
	if h.adminURL == "" {
		return ""
	}
	base, err := web.ReachableURL(h.adminURL, r)
	if err != nil {
		return ""
	}
	return base
}

// setLabProvider is POST /lab/provider, the fault panel's form.
func (h *Pages) setLabProvider(c echo.Context) error {
	delay, err := strconv.ParseInt(c.FormValue("delay_ms"), 10, 64)
	if err != nil || delay < 0 || delay > MaxDelay.Milliseconds() {
		return &web.PageError{Status: http.StatusBadRequest, Title: "Latency out of range",
			Message: fmt.Sprintf("The latency must be a whole number of milliseconds from 0 to %d.", MaxDelay.Milliseconds()),
			Action:  views.Link{Href: "/lab#faults", Label: "Back to the lab"}}
	}
	fault, ok := parseFault(c.FormValue("fail"))
	if !ok {
		return &web.PageError{Status: http.StatusBadRequest, Title: "Unknown fault",
			Message: "Pick one of the faults the list offers.", Action: views.Link{Href: "/lab#faults", Label: "Back to the lab"}}
	}
	err = h.lab.SetProvider(Behaviour{Delay: msToDuration(delay), Fail: fault})
	if errors.Is(err, ErrBusy) {
		return web.SeeOther(c, "/lab?fault=busy#faults")
	}
	if err != nil {
		return fmt.Errorf("set provider: %w", err)
	}
	return web.SeeOther(c, "/lab#faults")
}
