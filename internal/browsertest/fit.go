package browsertest

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// Screen is a window size a visitor meets a page at.
type Screen struct {
	Name          string
	Width, Height int64
}

var (
	Desktop   = Screen{"desktop", 1280, 800}
	Phone     = Screen{"phone", 390, 844}
	Projector = Screen{"projector", 1280, 720}
)

// AtSize makes the tab's viewport s, as a window of that size would (a
// phone's at its real width, so that media queries see 390 px).
func AtSize(t *testing.T, ctx context.Context, s Screen) {
	t.Helper()
	Do(t, ctx, "viewport "+s.Name, chromedp.EmulateViewport(s.Width, s.Height))
}

// misfit is what fitProblems finds wrong with the page as laid out.
type misfit struct {
	Overflow int      `json:"overflow"` // px the page is wider than the viewport
	Wide     []string `json:"wide"`     // the elements that stick out
	Small    []string `json:"small"`    // controls under 24×24 px
}

// fitScript measures the page in the browser: how far it sticks out to the
// right, and which controls a finger or a pointer cannot hit (WCAG 2.2's
// 24×24 px target size). Inline links in running text are exempt, as the
// rule exempts them. A radio button or checkbox counts by itself, not by
// its label: the box is what a visitor aims at.
const fitScript = `(() => {
  const vw = document.documentElement.clientWidth;
  const name = (e) => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") +
    (e.getAttribute("data-testid") ? "[data-testid=" + e.getAttribute("data-testid") + "]" : "") +
    (e.className && typeof e.className === "string" ? "." + e.className.trim().split(/\s+/).join(".") : "");
  const visible = (e) => { const r = e.getBoundingClientRect(); const s = getComputedStyle(e);
    return r.width > 0 && r.height > 0 && s.visibility !== "hidden" && s.display !== "none"; };
  const wide = [];
  for (const e of document.body.querySelectorAll("*")) {
    if (!visible(e)) continue;
    const r = e.getBoundingClientRect();
    if (r.right > vw + 1 && !e.closest("[data-scrolls]")) wide.push(name(e) + " right=" + Math.round(r.right));
  }
  const small = [];
  const inlineLink = (e) => e.tagName === "A" && getComputedStyle(e).display === "inline" &&
    e.parentElement && e.parentElement.textContent.trim().length > e.textContent.trim().length;
  for (const e of document.querySelectorAll("a[href], button, input, select, textarea, summary, [role=button]")) {
    if (e.type === "hidden" || !visible(e) || inlineLink(e)) continue;
    const r = e.getBoundingClientRect();
    if (r.width < 24 || r.height < 24) small.push(name(e) + " " + Math.round(r.width) + "x" + Math.round(r.height));
  }
  return {overflow: Math.max(0, document.documentElement.scrollWidth - vw), wide: wide.slice(0, 8), small: small.slice(0, 12)};
})()`

// WantFits fails the test when the page in the tab does not fit the
// viewport it was laid out in, or has a control too small to hit. An
// element that scrolls on purpose (a wide table in its own box) is marked
// data-scrolls, and what is inside it is not counted.
func WantFits(t *testing.T, ctx context.Context, page string, s Screen) {
	t.Helper()
	got := Run(t, ctx, "measure "+page, chromedp.Evaluate[misfit](fitScript))
	if got.Overflow > 0 {
		t.Errorf("%s at %s (%d px): the page is %d px wider than the screen; sticking out: %s",
			page, s.Name, s.Width, got.Overflow, strings.Join(got.Wide, ", "))
	}
	if len(got.Small) > 0 {
		t.Errorf("%s at %s: controls under 24×24 px: %s", page, s.Name, strings.Join(got.Small, ", "))
	}
}
