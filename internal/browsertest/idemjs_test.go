package browsertest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/jackc/pgx/v5"

	"exactlyonce/idem"
	"exactlyonce/idem/idemhttp"
	"exactlyonce/idem/idemjs"
	"exactlyonce/internal/browsertest"
	"exactlyonce/internal/pgtest"
)

// The kit's ES module (idem/idemjs) in Chromium, in front of the kit's
// net/http JSON route (idemhttp.Keys on a real PostgreSQL): a page whose
// form is sent through enhance, as idem/README.md shows it, to a route
// that writes a transfer in the transaction that finishes its key. A
// gate in front of the route records every request's key and, where a
// case says so, holds a request or answers it with a fault of its own.
// The server also serves examples/sendmoney's page (send.html, whose JSON
// route this one is a copy of), to send it the way the example does.

// jsPage is the test page: the form, and the module wired to it with a
// short backoff; what it hands back is pushed to window.answers, each
// retry's status to window.retries.
var jsPage = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>idem.js</title></head><body>
<form id="send" action="/api/transfers" method="post">
{{if .}}<input type="hidden" name="idempotency_key" value="{{.}}">{{end}}
<input name="friend" value="Ada" aria-label="Friend">
<input name="amount" type="number" value="20" aria-label="Amount">
<button>Send</button>
</form>
<script type="module">
import { enhance } from "/idem/idem.js";
window.retries = [];
window.answers = [];
enhance(document.getElementById("send"), {
  encode: "json",
  headers: { Authorization: "Bearer ada" },
  baseDelay: 200,
  maxDelay: 1000,
  onRetry: (r) => window.retries.push(r.status),
  onAnswer: (a) => window.answers.push({ status: a.response.status, replayed: a.replayed, key: a.key }),
  onError: (e) => window.answers.push({ error: String(e) }),
});
window.ready = true;
</script>
</body></html>`))

// jsRequest is a request the gate saw.
type jsRequest struct {
	key string
	at  time.Time
}

// jsGate stands in front of the route.
type jsGate struct {
	mu   sync.Mutex
	seen []jsRequest
	// faults answers the n-th request (from 0) with a status of the gate's
	// own instead of the route's, with Retry-After when retryAfter is set.
	faults     map[int]int
	retryAfter string
	// hold, when set, holds the work of the first request that claims its
	// key until it is closed or the request is gone.
	hold chan struct{}
}

func (g *jsGate) requests() []jsRequest {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]jsRequest(nil), g.seen...)
}

// jsServer serves the page, the module and the route, on a database of
// the test's own; it returns its URL and a function counting the
// transfers written.
func jsServer(t *testing.T, g *jsGate) (string, func() int) {
	t.Helper()
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `CREATE TABLE js_transfers (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		sender text NOT NULL, friend text NOT NULL, amount integer NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	keys := idemhttp.New(idemhttp.Options{Store: idem.NewStore(pool, idem.Options{}), Scope: func(r *http.Request) (string, error) {
		token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || token == "" {
			return "", &idem.ScopeError{Detail: "send Authorization: Bearer <account>"}
		}
		return token, nil
	}})
	var held sync.Once
	route := keys.Func(func(w http.ResponseWriter, r *http.Request) error {
		var in struct {
			Friend string `json:"friend"`
			Amount int    `json:"amount"`
		}
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Friend == "" {
			w.WriteHeader(http.StatusBadRequest)
			return nil
		}
		return idemhttp.Do(w, r, func(ctx context.Context, tx pgx.Tx) (idem.Response, error) {
			if g.hold != nil {
				first := false
				held.Do(func() { first = true })
				if first {
					select {
					case <-g.hold:
					case <-ctx.Done():
						return idem.Response{}, ctx.Err()
					}
				}
			}
			var id int64
			if err := tx.QueryRow(ctx, `INSERT INTO js_transfers (sender, friend, amount) VALUES ($1, $2, $3) RETURNING id`,
				idem.LockOf(ctx).Scope, in.Friend, in.Amount).Scan(&id); err != nil {
				return idem.Response{}, err
			}
			return idem.Created("/api/transfers/"+strconv.FormatInt(id, 10), map[string]any{"id": id, "friend": in.Friend, "amount": in.Amount})
		})
	})

	mux := http.NewServeMux()
	mux.Handle("GET /idem/", http.StripPrefix("/idem/", idemjs.Handler()))
	mux.HandleFunc("GET /example", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, "../../examples/sendmoney/send.html")
	})
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		jsPage.Execute(w, r.URL.Query().Get("key")) //nolint:errcheck // the browser went away
	})
	mux.Handle("POST /api/transfers", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		n := len(g.seen)
		g.seen = append(g.seen, jsRequest{key: r.Header.Get("Idempotency-Key"), at: time.Now()})
		status := g.faults[n]
		g.mu.Unlock()
		if status != 0 {
			if g.retryAfter != "" {
				w.Header().Set("Retry-After", g.retryAfter)
			}
			w.WriteHeader(status)
			return
		}
		route.ServeHTTP(w, r)
	}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL, func() int {
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM js_transfers`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
}

// jsAnswer is what the page's module handed back.
type jsAnswer struct {
	Status   int    `json:"status"`
	Replayed bool   `json:"replayed"`
	Key      string `json:"key"`
	Error    string `json:"error"`
}

func openJSPage(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	do(t, ctx, "open the page", chromedp.Navigate(url))
	waitFor(t, ctx, "the module wired", `window.ready === true`)
}

// waitAnswers waits until the page holds n answers, and returns them.
func waitAnswers(t *testing.T, ctx context.Context, n int) []jsAnswer {
	t.Helper()
	return browsertest.Poll(t, ctx, fmt.Sprintf("%d answers", n), `window.answers`, func(a []jsAnswer) bool { return len(a) >= n })
}

func setAmount(t *testing.T, ctx context.Context, amount string) {
	t.Helper()
	do(t, ctx, "type the amount "+amount, chromedp.SetValue(chromedp.CSS(`input[name=amount]`), amount))
}

func submitJS(t *testing.T, ctx context.Context) {
	t.Helper()
	do(t, ctx, "send", chromedp.Evaluate[chromedp.Void](`document.querySelector('#send button').click()`))
}

// setOffline takes the tab off the network, or puts it back, as
// DevTools' "Offline" does: requests fail at once, as with no connection,
// and navigator.onLine says so (with its offline and online events).
func setOffline(t *testing.T, ctx context.Context, offline bool) {
	t.Helper()
	do(t, ctx, fmt.Sprintf("offline %v", offline), chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
			return err
		}
		if _, err := chromedp.Call(ctx, emulateNetworkConditions, network.OverrideNetworkStateParams{
			Offline: offline, DownloadThroughput: -1, UploadThroughput: -1}); err != nil {
			return fmt.Errorf("emulate: %w", err)
		}
		_, err := chromedp.Call(ctx, network.OverrideNetworkState, network.OverrideNetworkStateParams{
			Offline: offline, DownloadThroughput: -1, UploadThroughput: -1})
		return err
	}))
}

// emulateNetworkConditions is DevTools' command that takes requests
// offline: cdproto has only its successor, which does not take the tab's
// requests offline in this Chromium. Its parameters are
// overrideNetworkState's.
var emulateNetworkConditions = cdp.Command[network.OverrideNetworkStateParams, cdp.Empty]{Method: "Network.emulateNetworkConditions"}

func wantKeys(t *testing.T, seen []jsRequest, want ...string) {
	t.Helper()
	if len(seen) != len(want) {
		t.Fatalf("got %d requests %v, want %d", len(seen), seen, len(want))
	}
	for i, r := range seen {
		if r.key != want[i] {
			t.Errorf("request %d: got key %s, want %s", i+1, r.key, want[i])
		}
	}
}

func TestIdemJSInTheBrowser(t *testing.T) {
	ctx := newBrowser(t)

	t.Run("a double click sends one request", func(t *testing.T) {
		g := &jsGate{hold: make(chan struct{})}
		url, transfers := jsServer(t, g)
		openJSPage(t, ctx, url)
		do(t, ctx, "double-click send", chromedp.Evaluate[chromedp.Void](`(() => {
			const b = document.querySelector('#send button');
			b.click();
			setTimeout(() => b.click(), 150);
		})()`))
		time.Sleep(500 * time.Millisecond) // the second click is in
		close(g.hold)
		a := waitAnswers(t, ctx, 1)
		time.Sleep(300 * time.Millisecond)
		seen := g.requests()
		wantKeys(t, seen, seen[0].key)
		if a[0].Status != http.StatusCreated || len(a) != 1 {
			t.Errorf("got answers %+v, want one 201", a)
		}
		if n := transfers(); n != 1 {
			t.Errorf("got %d transfers, want 1", n)
		}
	})

	t.Run("the sendmoney example's page sends once", func(t *testing.T) {
		g := &jsGate{hold: make(chan struct{})}
		url, transfers := jsServer(t, g)
		do(t, ctx, "open the example's page", chromedp.Navigate(url+"/example"))
		waitFor(t, ctx, "its form", `document.querySelector('#send button')`)
		do(t, ctx, "fill it in", chromedp.SendKeys(chromedp.CSS(`input[name=friend]`), "Ada"),
			chromedp.SendKeys(chromedp.CSS(`input[name=amount]`), "20"))
		do(t, ctx, "double-click send", chromedp.Evaluate[chromedp.Void](`(() => {
			const b = document.querySelector('#send button');
			b.click();
			setTimeout(() => b.click(), 150);
		})()`))
		time.Sleep(500 * time.Millisecond)
		close(g.hold)
		got := waitForText(t, ctx, "what the page says", `document.getElementById('result').textContent !== ''`, `#result`)
		if !strings.HasPrefix(got, "Sent 20 euros to Ada (transfer ") {
			t.Errorf("the page says %q, want the transfer sent", got)
		}
		if n := len(g.requests()); n != 1 || transfers() != 1 {
			t.Errorf("got %d requests and %d transfers, want 1 and 1", n, transfers())
		}
	})

	t.Run("the tab reloaded mid-request resends the same key", func(t *testing.T) {
		g := &jsGate{hold: make(chan struct{})}
		url, transfers := jsServer(t, g)
		openJSPage(t, ctx, url)
		submitJS(t, ctx)
		browsertest.Poll(t, ctx, "the first request at the server", `true`, func(bool) bool { return len(g.requests()) == 1 })
		// The reload cuts the request off in the browser; at the server
		// its work goes on.
		do(t, ctx, "reload", chromedp.Reload())
		waitFor(t, ctx, "the module wired again", `window.ready === true`)
		setAmount(t, ctx, "20") // the same content as before the reload
		submitJS(t, ctx)
		// The server still runs the first request: the second waits for
		// it (the kit's Wait), and is answered with its answer once the
		// first ends.
		browsertest.Poll(t, ctx, "the request after the reload at the server", `true`, func(bool) bool { return len(g.requests()) == 2 })
		close(g.hold)
		a := waitAnswers(t, ctx, 1)
		seen := g.requests()
		wantKeys(t, seen, seen[0].key, seen[0].key)
		if a[0].Status != http.StatusCreated || !a[0].Replayed {
			t.Errorf("got %+v, want the first request's 201, replayed", a[0])
		}
		if n := transfers(); n != 1 {
			t.Errorf("got %d transfers, want 1", n)
		}
	})

	t.Run("offline then online is retried with the same key", func(t *testing.T) {
		g := &jsGate{}
		url, transfers := jsServer(t, g)
		openJSPage(t, ctx, url)
		setOffline(t, ctx, true)
		submitJS(t, ctx)
		browsertest.Poll(t, ctx, "a retry of a network error", `window.retries.filter((s) => s === 0).length`, func(n int) bool { return n >= 2 })
		if n := len(g.requests()); n != 0 {
			t.Fatalf("offline: got %d requests at the server, want 0", n)
		}
		setOffline(t, ctx, false)
		a := waitAnswers(t, ctx, 1)
		if a[0].Status != http.StatusCreated {
			t.Fatalf("got %+v, want 201", a[0])
		}
		seen := g.requests()
		wantKeys(t, seen, `"`+a[0].Key+`"`)
		if n := transfers(); n != 1 {
			t.Errorf("got %d transfers, want 1", n)
		}
	})

	t.Run("a 409 with Retry-After: 2 waits 2 s", func(t *testing.T) {
		g := &jsGate{faults: map[int]int{0: http.StatusConflict}, retryAfter: "2"}
		url, transfers := jsServer(t, g)
		openJSPage(t, ctx, url)
		submitJS(t, ctx)
		a := waitAnswers(t, ctx, 1)
		seen := g.requests()
		wantKeys(t, seen, seen[0].key, seen[0].key)
		// 2 s and at most a tenth more of jitter, and the request's way.
		if waited := seen[1].at.Sub(seen[0].at); waited < 2*time.Second || waited > 2700*time.Millisecond {
			t.Errorf("the retry came %v after the 409, want 2 s to 2.2 s", waited)
		}
		if a[0].Status != http.StatusCreated || transfers() != 1 {
			t.Errorf("got %+v and %d transfers, want 201 and 1", a[0], transfers())
		}
	})

	t.Run("an edited form gets a new key, the same content its own", func(t *testing.T) {
		// The first two answers are 500s: the outcome is open, so the
		// key is kept for the content it was sent with.
		g := &jsGate{faults: map[int]int{0: http.StatusInternalServerError, 1: http.StatusInternalServerError}}
		url, transfers := jsServer(t, g)
		openJSPage(t, ctx, url)
		submitJS(t, ctx)
		waitAnswers(t, ctx, 1)
		submitJS(t, ctx)
		waitAnswers(t, ctx, 2)
		setAmount(t, ctx, "21")
		submitJS(t, ctx)
		waitAnswers(t, ctx, 3)
		setAmount(t, ctx, "20")
		submitJS(t, ctx)
		a := waitAnswers(t, ctx, 4)
		seen := g.requests()
		k20, k21 := seen[0].key, seen[2].key
		wantKeys(t, seen, k20, k20, k21, k20)
		if k20 == k21 {
			t.Errorf("the edited form was sent with the key of the form before, %s", k20)
		}
		if a[2].Status != http.StatusCreated || a[3].Status != http.StatusCreated || transfers() != 2 {
			t.Errorf("got %+v and %d transfers, want 201 for 21 and for 20, 2 transfers", a, transfers())
		}
	})

	t.Run("a 422 is not retried", func(t *testing.T) {
		g := &jsGate{}
		url, transfers := jsServer(t, g)
		// The key the server renders into the form was used already, for
		// another transfer: the kit refuses the form's (422).
		const key = "spent-key-1"
		req, _ := http.NewRequest(http.MethodPost, url+"/api/transfers", strings.NewReader(`{"friend":"Bob","amount":5}`))
		req.Header.Set("Authorization", "Bearer ada")
		req.Header.Set("Idempotency-Key", key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != http.StatusCreated {
			t.Fatalf("the first use of the key: got %v, %v, want 201", resp, err)
		}
		io.Copy(io.Discard, resp.Body) //nolint:errcheck // read to reuse the connection
		resp.Body.Close()

		openJSPage(t, ctx, url+"/?key="+key)
		submitJS(t, ctx)
		a := waitAnswers(t, ctx, 1)
		time.Sleep(1500 * time.Millisecond) // a retry would be in by now
		seen := g.requests()
		if len(seen) != 2 || seen[1].key != `"`+key+`"` {
			t.Fatalf("got requests %v, want the test's and one of the page, with the server's key", seen)
		}
		if a[0].Status != http.StatusUnprocessableEntity {
			t.Errorf("got %+v, want 422", a[0])
		}
		if n := transfers(); n != 1 {
			t.Errorf("got %d transfers, want the first one only", n)
		}
	})
}
