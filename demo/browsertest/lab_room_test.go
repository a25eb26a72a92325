package browsertest_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"exactlyonce/internal/apptest"
	"exactlyonce/internal/browsertest"
)

// The lab as a presenter uses it on a projector (issue 38): Run on screen
// on every card, the moment that matters marked on the timeline, the
// double-click told as two clicks, a legend, and text a room reads.

// runPlace is where a card's Run button is, and whether its card fits.
type runPlace struct {
	Card      string  `json:"card"`
	Top       float64 `json:"top"`
	Bottom    float64 `json:"bottom"`
	CardEnd   float64 `json:"cardEnd"`
	Viewport  float64 `json:"viewport"`
	Attempts  int     `json:"attempts"`
	OnScreen  bool    `json:"onScreen"`
	CardFits  bool    `json:"cardFits"`
	RunHeight float64 `json:"runHeight"`
}

// readRunPlace measures the Run button of the card shown in presenter
// mode, or, with a card id, of that card scrolled to the top of the
// window as a link to it (#scenario-…) puts it.
func readRunPlace(card string) string {
	return fmt.Sprintf(`(() => {
	const id = %q;
	const card = id ? document.getElementById(id) : document.querySelector('.lab-card[data-current]');
	if (id) { card.scrollIntoView({block: 'start'}); }
	const run = card.querySelector('[data-testid=run]').getBoundingClientRect();
	const box = card.getBoundingClientRect();
	return {
		card: card.id, top: run.top, bottom: run.bottom, cardEnd: box.bottom, viewport: innerHeight,
		attempts: card.querySelectorAll('[data-testid=attempt]').length, runHeight: run.height,
		onScreen: run.height > 0 && run.top >= 0 && run.bottom <= innerHeight && run.left >= 0 && run.right <= innerWidth,
		cardFits: box.top >= 0 && box.bottom <= innerHeight,
	};
})()`, card)
}

// TestLabRunAlwaysOnScreen walks every card at 1280×720 and 1280×800,
// in presenter mode and on the page, after runs that fill the tallest
// timelines (ten attempts) and the one with two lanes and two marks (the
// last mug): Run is inside the window on every card, and in
// presenter mode the whole card is.
func TestLabRunAlwaysOnScreen(t *testing.T) {
	h := apptest.New(t, withLab)
	runScenarios(t, h, "double-click", "ten-at-once", "baseline", "crash-after-charge", "slow-original", "last-mug")
	ctx := browsertest.NewBrowser(t)
	for _, s := range []browsertest.Screen{browsertest.Projector, browsertest.Desktop} {
		browsertest.AtSize(t, ctx, s)
		browsertest.Do(t, ctx, "open presenter mode", chromedp.Navigate(h.URL+"/lab?present=1&card=1"))
		browsertest.WaitFor(t, ctx, "presenter mode", `document.readyState === "complete" && document.querySelector('[data-lab][data-present] .lab-card[data-current]')`)
		n := browsertest.Run(t, ctx, "count the cards", chromedp.Evaluate[int](`document.querySelectorAll('.lab-card').length`))
		tallest := 0
		for i := range n {
			if i > 0 {
				browsertest.Do(t, ctx, "next card", chromedp.Click(chromedp.CSS(`[data-testid=present-next]`)))
			}
			got := browsertest.Run(t, ctx, "measure Run", chromedp.Evaluate[runPlace](readRunPlace("")))
			tallest = max(tallest, got.Attempts)
			if !got.OnScreen {
				t.Errorf("presenter mode at %s: Run of %s is off screen (%+v)", s.Name, got.Card, got)
			}
			if !got.CardFits {
				t.Errorf("presenter mode at %s: %s ends at %.0f px, below the %0.f px window", s.Name, got.Card, got.CardEnd, got.Viewport)
			}
			if got.Card == "scenario-ten-at-once" {
				browsertest.Screenshot(t, ctx, "lab-present-ten-"+s.Name+".png", "")
			}
		}
		if tallest < 10 {
			t.Fatalf("at %s: the tallest timeline has %d attempts, want a ten-attempt card", s.Name, tallest)
		}
		browsertest.Do(t, ctx, "open the lab", chromedp.Navigate(h.URL+"/lab"))
		browsertest.WaitFor(t, ctx, "lab page", `document.querySelector('#result-ten-at-once [data-testid=attempt]')`)
		for _, id := range browsertest.Run(t, ctx, "card ids", chromedp.Evaluate[[]string](`[...document.querySelectorAll('.lab-card')].map(c => c.id)`)) {
			if got := browsertest.Run(t, ctx, "measure Run of "+id, chromedp.Evaluate[runPlace](readRunPlace(id))); !got.OnScreen {
				t.Errorf("the lab at %s: Run of %s is off screen (%+v)", s.Name, id, got)
			}
		}
	}
}

// timelineText is the type sizes of a timeline as presenter mode shows it.
type timelineText struct {
	Sizes   map[string]float64 `json:"sizes"`
	Legend  []string           `json:"legend"`
	Lanes   [][]string         `json:"lanes"`
	Names   []string           `json:"names"`
	Summary string             `json:"summary"`
	Retry   int                `json:"retryLines"`
}

// readTimelineText reads the card shown in presenter mode: the smallest
// computed font size of each kind of text on its timeline, its legend, its
// lanes' names and attempt numbers, and on how many lines its Retry-After
// is written.
const readTimelineText = `(() => {
	const card = document.querySelector('.lab-card[data-current]');
	const sizes = {};
	for (const [what, sel] of Object.entries({
		axis: '[data-testid=axis] .lab-tick', heading: '.lab-timeline thead th', status: '[data-testid=status]',
		lock: '[data-testid=lock]', replayed: '[data-testid=replayed]', retry: '.lab-retry',
		mark: '[data-testid=mark]', legend: '[data-testid=legend] li', attempt: '.lab-attempt, .lab-attempt code',
	})) {
		const found = [...card.querySelectorAll(sel)].map(e => parseFloat(getComputedStyle(e).fontSize));
		if (found.length) { sizes[what] = Math.min(...found); }
	}
	const retry = card.querySelector('.lab-retry');
	return {
		sizes,
		legend: [...card.querySelectorAll('[data-testid=legend] li')].map(e => e.textContent.replace(/\s+/g, ' ').trim()),
		names: [...card.querySelectorAll('[data-testid=lane]')].map(e => e.textContent.trim()),
		lanes: [...card.querySelectorAll('[data-testid=timeline] tbody')].map(b =>
			[...b.querySelectorAll('[data-testid=attempt] td:first-child')].map(td => td.textContent.trim())),
		summary: card.querySelector('.lab-summary').textContent.replace(/\s+/g, ' ').trim(),
		retryLines: retry ? retry.getClientRects().length : 0,
	};
})()`

// TestLabReadsFromTheBack shows the double-click, slow-original,
// crash-after-charge and webhook-first cards in presenter mode at
// 1280×720: the timeline's axis, badges, marks and legend in 16 px or
// more; a legend on each; the double-click in two lanes, one per click,
// each numbered from 1, and counted as two clicks; and the instant each
// run turns on marked on its timeline.
func TestLabReadsFromTheBack(t *testing.T) {
	h := apptest.New(t, withLab)
	cards := []string{"double-click", "crash-after-charge", "webhook-first", "slow-original"}
	runScenarios(t, h, cards...)
	ctx := browsertest.NewBrowser(t)
	browsertest.AtSize(t, ctx, browsertest.Projector)
	browsertest.Do(t, ctx, "open the lab", chromedp.Navigate(h.URL+"/lab"))
	browsertest.WaitFor(t, ctx, "lab page", `document.querySelector('#result-slow-original [data-testid=attempt]')`)
	numbers := browsertest.Run(t, ctx, "card numbers", chromedp.Evaluate[map[string]string](
		`Object.fromEntries([...document.querySelectorAll('.lab-card')].map(c => [c.id, c.querySelector('.lab-num').textContent.trim()]))`))

	marks := map[string]string{
		"slow-original":      "lock expired",
		"webhook-first":      "webhook",
		"crash-after-charge": "charged",
	}
	for _, id := range cards {
		browsertest.Do(t, ctx, "present "+id, chromedp.Navigate(h.URL+"/lab?present=1&card="+numbers["scenario-"+id]))
		browsertest.WaitFor(t, ctx, id+" shown", `document.querySelector('#scenario-`+id+`[data-current] [data-testid=attempt]')`)
		got := browsertest.Run(t, ctx, "read "+id, chromedp.Evaluate[timelineText](readTimelineText))
		for _, what := range []string{"axis", "heading", "status", "legend", "attempt"} {
			if _, ok := got.Sizes[what]; !ok {
				t.Errorf("%s: no %s text on the card (sizes %v)", id, what, got.Sizes)
			}
		}
		for what, size := range got.Sizes {
			if size < 16 {
				t.Errorf("%s: %s text is %.1f px, want 16 px or more", id, what, size)
			}
		}
		if len(got.Legend) == 0 {
			t.Errorf("%s: no legend for the timeline's colours and badges", id)
		}
		if want := marks[id]; want != "" {
			found := browsertest.Run(t, ctx, "marks of "+id, chromedp.Evaluate[[]string](
				`[...document.querySelectorAll('#scenario-`+id+` [data-testid=mark]')].map(e => e.textContent.trim())`))
			if !slices.Contains(found, want) {
				t.Errorf("%s: got marks %q on the timeline, want %q", id, found, want)
			}
			// The mark is drawn across the bars, not only named.
			lines := browsertest.Run(t, ctx, "mark lines of "+id, chromedp.Evaluate[int](
				`document.querySelectorAll('#scenario-`+id+` [data-testid=attempt] .lab-mark-line').length`))
			if lines == 0 {
				t.Errorf("%s: no mark drawn across the attempts' bars", id)
			}
		}
		if id == "double-click" {
			if len(got.Names) != 2 || len(got.Lanes) != 2 {
				t.Errorf("double-click: got lanes %q with attempts %q, want two lanes", got.Names, got.Lanes)
			}
			for i, lane := range got.Lanes {
				for j, n := range lane {
					if n != fmt.Sprint(j+1) {
						t.Errorf("double-click: lane %d is numbered %q, want 1 to %d", i+1, lane, len(lane))
						break
					}
				}
			}
			if !strings.HasPrefix(got.Summary, "2 clicks") {
				t.Errorf("double-click: the summary reads %q, want it to count 2 clicks", got.Summary)
			}
			if got.Retry != 1 {
				t.Errorf("double-click: Retry-After is written on %d lines, want 1", got.Retry)
			}
			browsertest.Screenshot(t, ctx, "lab-present-double-click.png", "lab-present-double-click.png")
		}
		if id == "slow-original" {
			browsertest.Screenshot(t, ctx, "lab-present-slow-original.png", "lab-present-slow-original.png")
		}
	}
}
