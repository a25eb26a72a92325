package browsertest_test

import (
	"testing"

	"github.com/chromedp/chromedp"

	"exactlyonce/internal/apptest"
)

// River UI, a single-page app of its own on the admin listener, has a way
// back to the operator's pages at both sizes: its link is on screen over
// the app once the app has drawn itself, and leads to the admin index.
func TestRiverUIHasAWayBack(t *testing.T) {
	h := apptest.New(t)
	h.StartJobs(t)
	admin := serveAdmin(t, h)
	ctx := newBrowser(t)
	for _, s := range shopScreens {
		atSize(t, ctx, s)
		do(t, ctx, "open River UI", chromedp.Navigate(admin+"/riverui/"))
		// The app has drawn its list of job states (River UI's words, of the
		// pinned version).
		waitFor(t, ctx, "River UI drawn", `document.querySelector('#root') && document.querySelector('#root').textContent.includes('Completed')`)
		type place struct {
			Top, Bottom, Left, Right, Width, Height float64
			OnTop                                   bool
		}
		got := run(t, ctx, "place the link", chromedp.Evaluate[place](`(() => {
			const a = document.querySelector('[data-testid=riverui-way-back]');
			const r = a.getBoundingClientRect();
			const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
			return {Top: r.top, Bottom: r.bottom, Left: r.left, Right: r.right, Width: innerWidth, Height: innerHeight, OnTop: hit === a};
		})()`))
		if got.Top < 0 || got.Left < 0 || got.Bottom > got.Height || got.Right > got.Width || !got.OnTop || got.Bottom-got.Top < 24 {
			t.Errorf("%s: the way back is at %+v, want it on screen, on top, at least 24 px tall", s.Name, got)
		}
		screenshot(t, ctx, "riverui-"+s.Name+".png", "")
		do(t, ctx, "go back", chromedp.Click(chromedp.CSS(`[data-testid=riverui-way-back]`)))
		waitFor(t, ctx, "the admin index", `location.pathname === "/" && document.querySelector('[data-testid=admin-links]')`)
	}
}
