package api_test

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"exactlyonce/internal/apptest"
	"exactlyonce/internal/problem"
)

// browserAccept is what Chromium sends for a page.
const browserAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"

// Every problem type is a page for a browser, with what a client should
// do, and plain text for everyone else (curl's */*, no Accept, or
// text/plain), which starts as it always did: the title and explanation.
func TestProblemPages(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	for _, k := range problem.Kinds {
		a, _ := k.Advice()
		path := "/problems/" + k.Slug

		r := h.Do(t, http.MethodGet, path, "", "Accept", browserAccept)
		if r.Status != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
			t.Errorf("%s as a browser: got %d %s, want 200 text/html", k.Slug, r.Status, r.Header.Get("Content-Type"))
			continue
		}
		if !strings.Contains(r.Header.Get("Vary"), "Accept") {
			t.Errorf("%s: got Vary %q, want Accept", k.Slug, r.Header.Get("Vary"))
		}
		doc, err := goquery.NewDocumentFromReader(bytes.NewReader(r.Body))
		if err != nil {
			t.Fatal(err)
		}
		text := func(id string) string { return strings.TrimSpace(doc.Find(`[data-testid="` + id + `"]`).Text()) }
		if got := text("problem-title"); got != k.Title {
			t.Errorf("%s: got title %q, want %q", k.Slug, got, k.Title)
		}
		if got := text("problem-status"); !strings.HasPrefix(got, strconv.Itoa(k.Status)+" ") {
			t.Errorf("%s: got status %q, want %d", k.Slug, got, k.Status)
		}
		if got, want := strings.HasPrefix(text("problem-retry-after"), "Sent"), a.RetryAfter; got != want {
			t.Errorf("%s: Retry-After said %q, want sent = %v", k.Slug, text("problem-retry-after"), want)
		}
		if got := text("problem-do"); got == "" || got != a.Do {
			t.Errorf("%s: got what to do %q, want %q", k.Slug, got, a.Do)
		}
		if got := text("problem-retry"); got != a.Retry.String() {
			t.Errorf("%s: got retry rule %q, want %q", k.Slug, got, a.Retry)
		}
		if n := doc.Find(`[data-testid="problem-types"] a`).Length(); n != len(problem.Kinds) {
			t.Errorf("%s: got %d links to problem types, want %d", k.Slug, n, len(problem.Kinds))
		}

		for _, accept := range []string{"text/plain", "*/*", ""} {
			var headers []string
			if accept != "" {
				headers = []string{"Accept", accept}
			}
			r := h.Do(t, http.MethodGet, path, "", headers...)
			body := string(r.Body)
			if r.Status != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/plain") ||
				!strings.HasPrefix(body, k.Title+"\n\n"+k.About+"\n") || !strings.Contains(body, a.Do) ||
				!strings.Contains(body, "Status: "+strconv.Itoa(k.Status)) {
				t.Errorf("%s with Accept %q: got %d %s %q, want 200 text/plain with the title, explanation and advice",
					k.Slug, accept, r.Status, r.Header.Get("Content-Type"), body)
			}
		}
	}
	if r := h.Do(t, http.MethodGet, "/problems/no-such-type", "", "Accept", browserAccept); r.Status != http.StatusNotFound {
		t.Errorf("an unknown problem type: got %d, want 404", r.Status)
	}
}
