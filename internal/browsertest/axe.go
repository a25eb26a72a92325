package browsertest

import (
	"context"
	_ "embed"
	"encoding/json"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// axeSource is axe-core (axe/README.md says which and from where), the
// accessibility engine the browser tests run on the shop's pages.
//
//go:embed axe/axe.min.js
var axeSource string

// AxeViolation is one rule a page breaks, as axe-core reports it, with
// the elements that break it.
type AxeViolation struct {
	ID     string   `json:"id"`
	Impact string   `json:"impact"`
	Help   string   `json:"help"`
	Nodes  []string `json:"nodes"`
}

// Axe runs axe-core on the page the browser shows and returns the
// violations of serious or critical impact (the moderate and minor ones
// are advice). The script is evaluated through the DevTools protocol,
// which the pages' Content-Security-Policy does not govern, so no page
// needs to allow it.
func Axe(t *testing.T, ctx context.Context, page string) []AxeViolation {
	t.Helper()
	if !Run(t, ctx, page+": load axe-core", chromedp.Evaluate[bool](`typeof window.axe === "object"`)) {
		Run(t, ctx, page+": load axe-core", chromedp.Evaluate[bool](axeSource+"\n;true"))
	}
	Run(t, ctx, page+": start axe-core", chromedp.Evaluate[bool](`window.__axe = null;
		axe.run(document, {resultTypes: ["violations"]}).then(r => {
			window.__axe = JSON.stringify(r.violations
				.filter(v => v.impact === "serious" || v.impact === "critical")
				.map(v => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map(n => n.target.join(" "))})));
		}, e => { window.__axe = JSON.stringify([{id: "axe-error", impact: "critical", help: String(e), nodes: []}]); });
		true`))
	raw := Poll(t, ctx, page+": axe-core's verdict", `window.__axe ?? ""`, func(s string) bool { return s != "" })
	var vs []AxeViolation
	if err := json.Unmarshal([]byte(raw), &vs); err != nil {
		t.Fatalf("%s: axe-core's answer %q: %v", page, raw, err)
	}
	return vs
}

// WantAccessible fails the test for each serious or critical axe-core
// violation of the page the browser shows.
func WantAccessible(t *testing.T, ctx context.Context, page string) {
	t.Helper()
	for _, v := range Axe(t, ctx, page) {
		t.Errorf("%s: axe-core, %s (%s): %s, at %s", page, v.ID, v.Impact, v.Help, strings.Join(v.Nodes, "; "))
	}
}
