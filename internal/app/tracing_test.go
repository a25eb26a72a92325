package app_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/exaring/otelpgx"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"exactlyonce/internal/apptest"
	"exactlyonce/internal/logging"
	"exactlyonce/internal/problem"
	"exactlyonce/internal/tracing"
)

// tracedShop is the application with tracing on as `web` runs it (every
// trace sampled, kept in memory) on a pool whose statements are spans, with
// every span also recorded by the SDK's in-memory recorder, and its log
// lines, as JSON, in logs.
type tracedShop struct {
	*apptest.Harness
	spans *tracetest.SpanRecorder
	logs  *logBuffer
}

func newTracedShop(t *testing.T, opts ...apptest.Option) tracedShop {
	t.Helper()
	spans := tracetest.NewSpanRecorder()
	cfg := apptest.DefaultTracing()
	cfg.Processors = []sdktrace.SpanProcessor{spans}
	logs := &logBuffer{}
	opts = append(opts, func(cfg *apptest.Setup) {
		cfg.Log = logging.New(logs, "json", -4) // debug: the claim's line too
	})
	return tracedShop{Harness: apptest.NewTraced(t, cfg, opts...), spans: spans, logs: logs}
}

// span waits up to 10 s for an ended span named name of which match (if
// any) approves: a request's span ends after its answer is sent, a job's
// when the job has run.
func (s tracedShop) span(t *testing.T, name string, match func(sdktrace.ReadOnlySpan) bool) sdktrace.ReadOnlySpan {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		for _, sp := range s.spans.Ended() {
			if sp.Name() == name && (match == nil || match(sp)) {
				return sp
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no span %q ended within 10 s; got %v", name, names(s.spans.Ended()))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// trace is every ended span of the trace id.
func (s tracedShop) trace(id trace.TraceID) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, sp := range s.spans.Ended() {
		if sp.SpanContext().TraceID() == id {
			out = append(out, sp)
		}
	}
	return out
}

// child is the span named name whose parent is parent, among spans.
func child(t *testing.T, spans []sdktrace.ReadOnlySpan, parent sdktrace.ReadOnlySpan, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	for _, sp := range spans {
		if sp.Name() == name && sp.Parent().SpanID() == parent.SpanContext().SpanID() {
			return sp
		}
	}
	t.Fatalf("no span %q under %q; the trace has %v", name, parent.Name(), names(spans))
	return nil
}

// after fails unless first ended before second started.
func after(t *testing.T, first, second sdktrace.ReadOnlySpan) {
	t.Helper()
	if second.StartTime().Before(first.EndTime()) {
		t.Errorf("%s started at %s, before %s ended at %s; want it after", second.Name(), second.StartTime(), first.Name(), first.EndTime())
	}
}

func attr(sp sdktrace.ReadOnlySpan, key string) string {
	for _, a := range sp.Attributes() {
		if string(a.Key) == key {
			return a.Value.String()
		}
	}
	return ""
}

func linksTo(sp sdktrace.ReadOnlySpan, sc trace.SpanContext) bool {
	for _, l := range sp.Links() {
		if l.SpanContext.TraceID() == sc.TraceID() && l.SpanContext.SpanID() == sc.SpanID() {
			return true
		}
	}
	return false
}

func names(spans []sdktrace.ReadOnlySpan) []string {
	out := make([]string, len(spans))
	for i, sp := range spans {
		out[i] = sp.Name()
	}
	return out
}

// A checkout through the real HTTP server on real PostgreSQL is one trace:
// the request's span, and under it, in order, the claim, the
// PaymentIntent's create (its HTTP call, a client span whose context the
// call carries in its traceparent header: the provider, a process of its
// own, joins the trace in a collector, not in the shop's memory), the
// fenced store of its id, the confirm (likewise), and the finish, each phase with
// its statement; the outbox's jobs, once they run, are traces of their own
// linked to the finish that enqueued them. The admin listener lists them
// all under the key, and a log line of the request names its trace.
func TestCheckoutIsOneTrace(t *testing.T) {
	t.Parallel()
	withCatcher, _ := apptest.WithMailCatcher(t)
	s := newTracedShop(t, withCatcher)
	c := s.NewCustomer(t)
	if r := s.PlaceOrder(t, c, "k", oneMug); r.Status != http.StatusCreated {
		t.Fatalf("order: got %d %s, want 201", r.Status, r.Body)
	}
	ref := tracing.KeyRef(c.ID.String(), "k")
	req := s.span(t, "POST /api/orders", func(sp sdktrace.ReadOnlySpan) bool { return attr(sp, "exactlyonce.key.ref") == ref })
	if req.Parent().IsValid() || req.SpanKind() != trace.SpanKindServer {
		t.Errorf("the request's span: got parent %v, kind %v, want a server span at the root", req.Parent(), req.SpanKind())
	}
	if got := attr(req, "http.route"); got != "/api/orders" {
		t.Errorf("http.route: got %q, want /api/orders", got)
	}
	if got, want := attr(req, "exactlyonce.key"), logging.RedactKey("k"); got != want {
		t.Errorf("the key on the request's span: got %q, want it redacted, %q", got, want)
	}
	spans := s.trace(req.SpanContext().TraceID())

	claim := child(t, spans, req, "checkout.claim")
	if got := attr(claim, "exactlyonce.outcome"); got != "new" {
		t.Errorf("claim outcome: got %q, want new", got)
	}
	statement := child(t, spans, claim, "query ClaimOrderKey")
	if !strings.HasPrefix(attr(statement, "db.query.text"), "-- name: ClaimOrderKey") {
		t.Errorf("the claim's statement span: got db.query.text %q, want the statement", attr(statement, "db.query.text"))
	}
	if got := attr(statement, string(otelpgx.QueryParametersKey)); got != "" {
		t.Errorf("the claim's statement span carries its arguments %s; want none (they hold the key and the request)", got)
	}
	create := child(t, spans, req, "provider.create")
	createAt := child(t, spans, create, "HTTP POST")
	store := child(t, spans, req, "checkout.store_intent")
	child(t, spans, store, "query StoreIntent")
	confirm := child(t, spans, req, "provider.confirm")
	confirmAt := child(t, spans, confirm, "HTTP POST")
	for _, sp := range []sdktrace.ReadOnlySpan{createAt, confirmAt} {
		if sp.SpanKind() != trace.SpanKindClient {
			t.Errorf("%s: got kind %v, want the shop's client span of the provider's call", sp.Name(), sp.SpanKind())
		}
	}
	if got := attr(confirm, "exactlyonce.provider.result"); got != "succeeded" {
		t.Errorf("confirm result: got %q, want succeeded", got)
	}
	finish := child(t, spans, req, "checkout.finish")
	child(t, spans, finish, "query FinishOrder")
	after(t, claim, create)
	after(t, create, store)
	after(t, store, confirm)
	after(t, confirm, finish)

	s.StartJobs(t)
	for _, kind := range []string{"loyalty_points", "order_confirmation_mail"} {
		job := s.span(t, "river.work/"+kind, nil)
		if !linksTo(job, finish.SpanContext()) {
			t.Errorf("%s: got links %v, want one to the finish that enqueued it", job.Name(), job.Links())
		}
		if job.SpanContext().TraceID() == req.SpanContext().TraceID() || job.Parent().IsValid() {
			t.Errorf("%s: want a trace of its own, linked, not a part of the request's", job.Name())
		}
		// The worker's statements are spans of the job's trace.
		if len(s.trace(job.SpanContext().TraceID())) < 2 {
			t.Errorf("%s: got %v in its trace, want its statements too", job.Name(), names(s.trace(job.SpanContext().TraceID())))
		}
	}

	listed := traceIDs(t, s.Admin(t, "/traces?customer="+c.ID.String()+"&key=k"))
	if !listed[req.SpanContext().TraceID().String()] {
		t.Errorf("the key's traces page lists %v, want the request's trace %s", listed, req.SpanContext().TraceID())
	}
	for _, kind := range []string{"loyalty_points", "order_confirmation_mail"} {
		if job := s.span(t, "river.work/"+kind, nil); !listed[job.SpanContext().TraceID().String()] {
			t.Errorf("the key's traces page lists %v, want the %s job's trace too (it links to the order's)", listed, kind)
		}
	}
	page := s.Admin(t, "/traces/"+req.SpanContext().TraceID().String())
	doc := parse(t, page)
	for _, name := range []string{"POST /api/orders", "checkout.claim", "provider.confirm", "query FinishOrder"} {
		if doc.Find(`[data-testid="span"][data-span-name="`+name+`"]`).Length() != 1 {
			t.Errorf("the trace's page has no span %q", name)
		}
	}
	if doc.Find(`[data-testid="linked-from"] li`).Length() != 2 {
		t.Errorf("the trace's page lists %d traces linked from it, want the 2 jobs'", doc.Find(`[data-testid="linked-from"] li`).Length())
	}

	if !s.logged(t, req.SpanContext().TraceID(), "claim") {
		t.Errorf("no log line of the claim carries the trace id %s:\n%s", req.SpanContext().TraceID(), s.logs.String())
	}
}

// A problem+json answer names its trace in instance (urn:trace:<id>), as the
// log line of the refusal does.
func TestProblemInstanceIsTheTrace(t *testing.T) {
	t.Parallel()
	s := newTracedShop(t)
	c := s.NewCustomer(t)
	p := apptest.WantProblem(t, s.PlaceOrder(t, c, "", oneMug), problem.MissingKey)
	id, ok := strings.CutPrefix(p.Instance, tracing.InstancePrefix)
	traceID, err := trace.TraceIDFromHex(id)
	if !ok || err != nil {
		t.Fatalf("instance: got %q, want urn:trace:<trace id>", p.Instance)
	}
	s.span(t, "POST /api/orders", func(sp sdktrace.ReadOnlySpan) bool { return sp.SpanContext().TraceID() == traceID })
	if !s.logged(t, traceID, "request refused") {
		t.Errorf("the refusal's log line does not carry the trace id %s:\n%s", traceID, s.logs.String())
	}
}

// A span never carries a whole idempotency key: the request's url.path is
// the access log's, the key in it redacted.
func TestSpansRedactTheKeyInAPath(t *testing.T) {
	t.Parallel()
	s := newTracedShop(t)
	c := s.NewCustomer(t)
	const key = "0123456789-whole-key"
	if r := s.PlaceOrder(t, c, key, oneMug); r.Status != http.StatusCreated {
		t.Fatalf("order: got %d %s, want 201", r.Status, r.Body)
	}
	if r := s.Do(t, http.MethodGet, "/api/keys/"+key+"/events", "", "Authorization", "Bearer "+c.Token); r.Status != http.StatusOK {
		t.Fatalf("key events: got %d %s, want 200", r.Status, r.Body)
	}
	req := s.span(t, "GET /api/keys/:key/events", nil)
	if got, want := attr(req, "url.path"), "/api/keys/"+logging.RedactKey(key)+"/events"; got != want {
		t.Errorf("url.path: got %q, want %q", got, want)
	}
	for _, sp := range s.spans.Ended() {
		for _, a := range sp.Attributes() {
			if strings.Contains(a.Value.String(), key) {
				t.Errorf("span %s: attribute %s holds the whole key: %s", sp.Name(), a.Key, a.Value.String())
			}
		}
	}
}

// With tracing off, an answer names no trace and a log line carries no
// trace id: nothing claims a trace that does not exist.
func TestTracingOffNamesNoTrace(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, func(cfg *apptest.Setup) { cfg.Tracing = tracing.Off() })
	c := h.NewCustomer(t)
	if p := apptest.WantProblem(t, h.PlaceOrder(t, c, "", oneMug), problem.MissingKey); p.Instance != "" {
		t.Errorf("instance: got %q, want none", p.Instance)
	}
	if r := h.Admin(t, "/traces"); r.Status != http.StatusOK || parse(t, r).Find(`[data-testid="traces-off"]`).Length() != 1 {
		t.Errorf("/traces: got %d, want 200 saying that tracing is off", r.Status)
	}
}

// The completer's turn at a key is a trace of its own, named for the key
// and linked to the claim of the request that left it; the key's traces
// page lists both.
func TestCompleterTurnLinksToTheKeysClaim(t *testing.T) {
	t.Parallel()
	s := newTracedShop(t, func(cfg *apptest.Setup) { cfg.LockTimeout = time.Second })
	c := s.NewCustomer(t)
	// The confirm's answer is lost: the outcome is unknown, the key is
	// handed back, started, for the completer.
	s.SetProvider(t, 0, "before_charge")
	if r := s.PlaceOrder(t, c, "k", oneMug); r.Status != http.StatusBadGateway {
		t.Fatalf("order: got %d %s, want 502", r.Status, r.Body)
	}
	s.SetProvider(t, 0, "none")
	ref := tracing.KeyRef(c.ID.String(), "k")
	req := s.span(t, "POST /api/orders", func(sp sdktrace.ReadOnlySpan) bool { return attr(sp, "exactlyonce.key.ref") == ref })
	claim := child(t, s.trace(req.SpanContext().TraceID()), req, "checkout.claim")

	s.WaitLockExpired(t, c, "k")
	if n, err := s.App.Completer.Pass(context.Background()); err != nil || n != 1 {
		t.Fatalf("completer pass: got %d keys, %v, want 1", n, err)
	}
	turn := s.span(t, "completer.settle", func(sp sdktrace.ReadOnlySpan) bool { return attr(sp, "exactlyonce.key.ref") == ref })
	if turn.Parent().IsValid() || !linksTo(turn, claim.SpanContext()) {
		t.Errorf("the completer's turn: got parent %v and links %v, want a root linked to the key's claim", turn.Parent(), turn.Links())
	}
	if got := attr(turn, "exactlyonce.outcome"); got != "not_completed" {
		t.Errorf("the turn's outcome: got %q, want not_completed", got)
	}
	spans := s.trace(turn.SpanContext().TraceID())
	child(t, spans, turn, "provider.retrieve")
	child(t, spans, turn, "provider.cancel")
	if f := child(t, spans, turn, "checkout.finish"); attr(f, "exactlyonce.outcome") != "not_completed" {
		t.Errorf("the turn's finish: got outcome %q, want not_completed", attr(f, "exactlyonce.outcome"))
	}
	listed := traceIDs(t, s.Admin(t, "/traces?ref="+ref))
	for _, sp := range []sdktrace.ReadOnlySpan{req, turn} {
		if !listed[sp.SpanContext().TraceID().String()] {
			t.Errorf("the key's traces page lists %v, want %s's trace", listed, sp.Name())
		}
	}
}

// A latency histogram offers a sampled request's trace as the exemplar of
// its observation, to a scraper that asks for OpenMetrics.
func TestLatencyExemplarIsTheTrace(t *testing.T) {
	t.Parallel()
	s := newTracedShop(t)
	c := s.NewCustomer(t)
	if r := s.PlaceOrder(t, c, "k", oneMug); r.Status != http.StatusCreated {
		t.Fatalf("order: got %d %s, want 201", r.Status, r.Body)
	}
	req := s.span(t, "POST /api/orders", nil)
	w := httptest.NewRecorder()
	scrape := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	scrape.Header.Set("Accept", "application/openmetrics-text; version=1.0.0")
	s.App.Admin().ServeHTTP(w, scrape)
	want := `# {trace_id="` + req.SpanContext().TraceID().String() + `"}`
	found := false
	for line := range strings.Lines(w.Body.String()) {
		if strings.HasPrefix(line, `exactlyonce_http_request_duration_seconds_bucket{method="POST",route="/api/orders",status="201"`) &&
			strings.Contains(line, want) {
			found = true
		}
	}
	if !found {
		t.Errorf("no bucket of POST /api/orders' latency has the exemplar %s", want)
	}
}

// logged reports whether a log line whose msg is msg carries trace_id id.
func (s tracedShop) logged(t *testing.T, id trace.TraceID, msg string) bool {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(s.logs.String()))
	for sc.Scan() {
		var line struct {
			Msg     string `json:"msg"`
			TraceID string `json:"trace_id"`
			SpanID  string `json:"span_id"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		if line.Msg == msg && line.TraceID == id.String() && line.SpanID != "" {
			return true
		}
	}
	return false
}

// traceIDs are the trace ids a /traces page lists.
func traceIDs(t *testing.T, r apptest.Response) map[string]bool {
	t.Helper()
	ids := map[string]bool{}
	parse(t, r).Find(`[data-testid="trace"]`).Each(func(_ int, row *goquery.Selection) {
		id, _ := row.Attr("data-trace-id")
		ids[id] = true
	})
	return ids
}

func parse(t *testing.T, r apptest.Response) *goquery.Document {
	t.Helper()
	if r.Status != http.StatusOK {
		t.Fatalf("got %d %s, want 200", r.Status, r.Body)
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(r.Body))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// logBuffer is a bytes.Buffer safe for the log's writers and the test.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
