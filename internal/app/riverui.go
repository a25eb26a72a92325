package app

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"riverqueue.com/riverui"
)

// riverUIPrefix is where the admin listener serves River UI.
const riverUIPrefix = "/riverui"

// newRiverUI returns River UI (riverqueue.com/riverui) on client: the
// operators' view of the outbox's jobs, by state, with their attempts,
// errors and arguments, and the means to retry or cancel one. Its
// background services run until ctx ends. Its page carries a link back to
// the operator's pages (riverUIWayBack).
func newRiverUI(ctx context.Context, client *river.Client[pgx.Tx], log *slog.Logger) (http.Handler, error) {
	ui, err := riverui.NewHandler(&riverui.HandlerOpts{
		Endpoints: riverui.NewEndpoints(client, nil),
		Logger:    log,
		Prefix:    riverUIPrefix,
	})
	if err != nil {
		return nil, fmt.Errorf("river ui: %w", err)
	}
	if err := ui.Start(ctx); err != nil {
		return nil, fmt.Errorf("start river ui: %w", err)
	}
	return riverUIWayBack(ui), nil
}

// riverUIWayBack is the link River UI's page gets back to the admin
// index: a small fixed button in the bottom right corner, outside the
// element River UI's app draws into, so the app never removes it. River
// UI is a third-party single-page app with no option for such a link
// (riverui.HandlerOpts has a Prefix, nothing more), and its files are not
// ours to edit, so the link is added to the one HTML document it serves,
// whatever the route (its index, written for every address the app routes
// in the browser). Its style is inline: the page has River UI's own
// stylesheet, and the admin listener's CSP asks only frame-ancestors.
const riverUIWayBackLink = `<a href="/" data-testid="riverui-way-back" ` +
	`style="position:fixed;right:12px;bottom:12px;z-index:2147483647;padding:8px 14px;border-radius:999px;` +
	`background:#1c2330;color:#fff;font:600 14px/1.4 system-ui,sans-serif;text-decoration:none;` +
	`border:1px solid rgb(255 255 255/30%);box-shadow:0 2px 6px rgb(0 0 0/30%)">← Operations</a>`

// riverUIWayBack adds riverUIWayBackLink to the HTML River UI answers a
// GET with; everything else (its API's JSON, its scripts and images, a
// HEAD) passes untouched.
func riverUIWayBack(ui http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			ui.ServeHTTP(w, r)
			return
		}
		// The page is rewritten, so it is sent whole: a byte range of
		// River UI's bytes would not be a range of ours.
		r.Header.Del("Range")
		b := &htmlRewrite{ResponseWriter: w}
		ui.ServeHTTP(b, r)
		b.finish()
	})
}

// htmlRewrite holds back a 200 text/html answer until the handler is done,
// and passes any other straight through.
type htmlRewrite struct {
	http.ResponseWriter
	status  int
	decided bool
	html    bool
	page    bytes.Buffer
}

func (b *htmlRewrite) WriteHeader(status int) {
	if b.decided {
		return
	}
	b.decided, b.status = true, status
	b.html = status == http.StatusOK && strings.HasPrefix(b.Header().Get("Content-Type"), "text/html")
	if !b.html {
		b.ResponseWriter.WriteHeader(status)
	}
}

func (b *htmlRewrite) Write(p []byte) (int, error) {
	if !b.decided {
		b.WriteHeader(http.StatusOK)
	}
	if !b.html {
		return b.ResponseWriter.Write(p)
	}
	return b.page.Write(p)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (b *htmlRewrite) Unwrap() http.ResponseWriter { return b.ResponseWriter }

// finish sends a held page with the link before its </body> (at its end
// when it has none).
func (b *htmlRewrite) finish() {
	if !b.html {
		return
	}
	page := b.page.Bytes()
	if i := bytes.LastIndex(page, []byte("</body>")); i >= 0 {
		page = bytes.Join([][]byte{page[:i], []byte(riverUIWayBackLink), page[i:]}, nil)
	} else {
		page = append(page, riverUIWayBackLink...)
	}
	b.Header().Set("Content-Length", strconv.Itoa(len(page)))
	b.ResponseWriter.WriteHeader(b.status)
	_, _ = b.ResponseWriter.Write(page)
}
