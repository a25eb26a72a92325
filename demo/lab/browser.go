package lab

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"time"

	"github.com/PuerkitoBio/goquery"
)

// browser is a shopper's browser as the 3-D Secure scenarios need one: the
// way to the bank and back is the shop's pages' (POST /checkout, the bank's
// page, GET /checkout/return), not the JSON API's, and those pages know
// their shopper by a session cookie and guard their forms with a CSRF
// token. So it keeps cookies, submits the pages' own forms with what they
// carry, and follows redirects and the processing page's refresh, as a
// browser does; it runs no script, which the pages do not need.
type browser struct {
	base string
	http *http.Client
}

func newBrowser(base string, transport http.RoundTripper) (*browser, error) {
	jar, err := cookiejar.New(nil)
	if err != nil {
		return nil, fmt.Errorf("cookie jar: %w", err)
	}
	return &browser{base: base, http: &http.Client{
		Jar: jar, Transport: transport, Timeout: 30 * time.Second,
		// Redirects are followed by hand: the first answer is what the
		// lab records, where the browser lands is what it shows.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}, nil
}

// page is one answer the browser got.
type page struct {
	status   int
	location string
	replayed bool
	doc      *goquery.Document
}

// testid finds the elements whose data-testid is id.
func (p page) testid(id string) *goquery.Selection {
	return p.find(`[data-testid="` + id + `"]`)
}

// find finds the elements selector matches.
func (p page) find(selector string) *goquery.Selection {
	if p.doc == nil {
		return &goquery.Selection{}
	}
	return p.doc.Find(selector)
}

// form is the page's form whose data-testid is id, as formValues reads it.
func (p page) form(id string) (url.Values, bool) { return formValues(p.testid(id)) }

// formValues is the named inputs of form, one form, as the browser would
// submit them.
func formValues(form *goquery.Selection) (url.Values, bool) {
	if form.Length() != 1 {
		return nil, false
	}
	v := url.Values{}
	form.Find("input[name]").Each(func(_ int, in *goquery.Selection) {
		v.Add(in.AttrOr("name", ""), in.AttrOr("value", ""))
	})
	return v, true
}

// What a page shows, in the lab's words (Attempt.Page).
const (
	shownBank        = "sent to the bank"
	shownBackToShop  = "back to the shop"
	shownReceipt     = "the receipt"
	shownProcessing  = "processing"
	shownNotComplete = "payment not completed"
	shownDeclined    = "payment declined"
)

// shown names what p is.
func (p page) shown() string {
	switch {
	case p.testid("to-bank").Length() > 0:
		return shownBank
	case p.testid("receipt").Length() > 0:
		return shownReceipt
	case p.testid("processing").Length() > 0:
		return shownProcessing
	case p.testid("declined").Length() > 0 && p.testid("new-attempt").Text() == "Start a new checkout":
		return shownNotComplete
	case p.testid("declined").Length() > 0:
		return shownDeclined
	case p.status == http.StatusSeeOther && strings.Contains(p.location, "/checkout/return"):
		return shownBackToShop
	case p.status == http.StatusSeeOther:
		return "redirected"
	}
	return http.StatusText(p.status)
}

// orderID is the order a receipt shows, "" on any other page.
func (p page) orderID() string {
	return p.testid("order-id").AttrOr("data-order-id", "")
}

// bankURL is where the page sends the shopper to authenticate, "" when it
// does not.
func (p page) bankURL() string {
	return p.testid("to-bank").AttrOr("href", "")
}

func (b *browser) get(ctx context.Context, target string) (page, error) {
	return b.do(ctx, http.MethodGet, target, nil)
}

func (b *browser) post(ctx context.Context, target string, form url.Values) (page, error) {
	return b.do(ctx, http.MethodPost, target, form)
}

// do sends one request; target is a path of the shop or an absolute URL
// (the bank's page).
func (b *browser) do(ctx context.Context, method, target string, form url.Values) (page, error) {
	if strings.HasPrefix(target, "/") {
		target = b.base + target
	}
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		return page{}, err
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := b.http.Do(req)
	if err != nil {
		return page{}, err
	}
	defer resp.Body.Close()
	p := page{status: resp.StatusCode, location: resp.Header.Get("Location"), replayed: resp.Header.Get("Idempotent-Replayed") == "true"}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		if p.doc, err = goquery.NewDocumentFromReader(io.LimitReader(resp.Body, 1<<20)); err != nil {
			return page{}, fmt.Errorf("read page: %w", err)
		}
	}
	return p, nil
}

// maxHops bounds the redirects and refreshes one visit follows.
const maxHops = 20

// refreshEvery is how often the lab's browser reloads a processing page,
// quicker than the page's own refresh (a second) to keep a run short.
const refreshEvery = 100 * time.Millisecond

// land follows p's redirects, and the processing page's refresh while the
// order is being settled, to the page the browser ends on; waited says
// whether it had to refresh.
func (b *browser) land(ctx context.Context, p page) (end page, waited bool, err error) {
	for range maxHops {
		switch {
		case p.status == http.StatusSeeOther && p.location != "":
			if p, err = b.get(ctx, p.location); err != nil {
				return page{}, waited, err
			}
		case p.shown() == shownProcessing && p.refreshURL() != "":
			waited = true
			if err := sleep(ctx, refreshEvery); err != nil {
				return page{}, waited, err
			}
			if p, err = b.get(ctx, p.refreshURL()); err != nil {
				return page{}, waited, err
			}
		default:
			return p, waited, nil
		}
	}
	return page{}, waited, fmt.Errorf("no page to land on after %d redirects and reloads", maxHops)
}

// refreshURL is where the page's meta refresh leads, "" without one.
func (p page) refreshURL() string {
	if p.doc == nil {
		return ""
	}
	content := p.doc.Find(`meta[http-equiv=refresh]`).AttrOr("content", "")
	_, to, _ := strings.Cut(content, ";url=")
	return to
}
