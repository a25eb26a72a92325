package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"exactlyonce/api"
	"exactlyonce/fakestripe"
	"exactlyonce/internal/apptest"
	"exactlyonce/internal/checkout"
	"exactlyonce/internal/database"
	"exactlyonce/internal/problem"
	"exactlyonce/internal/web"
	"exactlyonce/localpg"
)

// spec is the OpenAPI description loaded and validated by kin-openapi, with
// a record of which operations the test exercised.
type spec struct {
	doc    *openapi3.T
	router routers.Router
	mu     sync.Mutex
	hit    map[string]bool // operation ids answered at least once
}

func loadSpec(tb testing.TB) *spec {
	tb.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(api.OpenAPI)
	if err != nil {
		tb.Fatalf("load openapi.json: %v", err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		tb.Fatalf("openapi.json is not a valid OpenAPI document: %v", err)
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		tb.Fatalf("router: %v", err)
	}
	return &spec{doc: doc, router: router, hit: map[string]bool{}}
}

// check validates one real exchange against the description: the route
// and status must be documented, and the headers and body must match.
func (s *spec) check(tb testing.TB, method, path string, r apptest.Response) {
	tb.Helper()
	req := httptest.NewRequest(method, path, nil)
	route, params, err := s.router.FindRoute(req)
	if err != nil {
		tb.Errorf("%s %s: not in openapi.json: %v", method, path, err)
		return
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 r.Status,
		Header:                 r.Header,
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	in.SetBodyBytes(r.Body)
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		tb.Errorf("%s %s → %d %s\ndoes not match openapi.json: %v", method, path, r.Status, r.Body, err)
	}
	s.mu.Lock()
	s.hit[route.Operation.OperationID] = true
	s.mu.Unlock()
}

// do sends a request to h, checks the status and validates the exchange.
// headers alternate name, value and replace the JSON Content-Type that
// apptest's Do would add, so a test can send another.
func (s *spec) do(tb testing.TB, h *apptest.Harness, want int, method, path, body string, headers ...string) apptest.Response {
	tb.Helper()
	req, err := http.NewRequest(method, h.URL+path, strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i] == "Host" {
			req.Host = headers[i+1]
			continue
		}
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", method, path, err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		tb.Fatalf("read %s %s: %v", method, path, err)
	}
	r := apptest.Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
	if r.Status != want {
		tb.Errorf("%s %s: got %d %s, want %d", method, path, r.Status, r.Body, want)
	}
	s.check(tb, method, path, r)
	return r
}

const mugOrder = `{"items":[{"sku":"mug-espresso","quantity":1}]}`

// TestOpenAPIDescribesEveryRouteAndError sends real requests to every route
// of the JSON API, including the errors each can answer, and validates every
// response against api/openapi.json. It then checks that every documented
// operation was exercised and every route of the server is documented.
func TestOpenAPIDescribesEveryRouteAndError(t *testing.T) {
	s := loadSpec(t)
	// An attempt of key "k-held" waits after its claim until released, so
	// that a retry meets the held key (409).
	claimed, release := make(chan struct{}), make(chan struct{})
	h := apptest.New(t, func(c *apptest.Setup) {
		c.LockTimeout = 30 * time.Second
		c.ProviderTimeout = 300 * time.Millisecond
		c.Hooks.AfterClaim = func(_ context.Context, cl checkout.Claimed) {
			if cl.Key == "k-held" && !cl.TakenOver {
				close(claimed)
				<-release
			}
		}
	})

	r := s.do(t, h, 201, "POST", "/api/customers", `{"name":"Ada"}`)
	var cust struct{ Token string }
	r.JSON(t, &cust)
	auth := []string{"Authorization", "Bearer " + cust.Token}
	s.do(t, h, 400, "POST", "/api/customers", `{"nom":"Ada"}`)
	s.do(t, h, 415, "POST", "/api/customers", "name=Ada", "Content-Type", "text/plain")

	s.do(t, h, 200, "GET", "/api/products", "")
	s.do(t, h, 200, "GET", "/api/idempotency-policy", "")
	s.do(t, h, 200, "GET", "/api/openapi.json", "")

	withKey := func(key string, extra ...string) []string {
		return append(append([]string{"Idempotency-Key", `"` + key + `"`}, auth...), extra...)
	}
	r = s.do(t, h, 201, "POST", "/api/orders", mugOrder, withKey("k-1")...)
	var receipt struct {
		OrderID string `json:"order_id"`
	}
	r.JSON(t, &receipt)
	if r = s.do(t, h, 201, "POST", "/api/orders", mugOrder, withKey("k-1")...); r.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay: got Idempotent-Replayed %q, want true", r.Header.Get("Idempotent-Replayed"))
	}
	s.do(t, h, 422, "POST", "/api/orders", `{"items":[{"sku":"mug-espresso","quantity":2}]}`, withKey("k-1")...)
	// The order's cancel, its replay, a second cancel under another key
	// (409), a key reused for another order's cancel (422), and its
	// refunds.
	s.do(t, h, 201, "POST", "/api/orders/"+receipt.OrderID+"/cancel", "", withKey("c-1")...)
	s.do(t, h, 201, "POST", "/api/orders/"+receipt.OrderID+"/cancel", "{}", withKey("c-1")...)
	s.do(t, h, 409, "POST", "/api/orders/"+receipt.OrderID+"/cancel", "", withKey("c-2")...)
	s.do(t, h, 400, "POST", "/api/orders/"+receipt.OrderID+"/cancel", `{"amount":1}`, withKey("c-3")...)
	s.do(t, h, 404, "POST", "/api/orders/"+uuid.NewString()+"/cancel", "", withKey("c-4")...)
	s.do(t, h, 200, "GET", "/api/orders/"+receipt.OrderID+"/refunds", "", auth...)
	s.do(t, h, 404, "GET", "/api/orders/"+uuid.NewString()+"/refunds", "", auth...)
	s.do(t, h, 400, "POST", "/api/orders", mugOrder, auth...)
	s.do(t, h, 400, "POST", "/api/orders", mugOrder, withKey(strings.Repeat("k", 256))...)
	s.do(t, h, 400, "POST", "/api/orders", `{"items":[]}`, withKey("k-2")...)
	s.do(t, h, 401, "POST", "/api/orders", mugOrder, "Idempotency-Key", "k-3")
	s.do(t, h, 415, "POST", "/api/orders", mugOrder, withKey("k-4", "Content-Type", "text/plain")...)
	s.do(t, h, 402, "POST", "/api/orders", `{"items":[{"sku":"mug-espresso","quantity":1}],"card":"4000000000000002"}`, withKey("k-5")...)

	// A retry meets a held key (409); provider faults: the answer is
	// lost after charging, also when asked again (502), and a provider
	// that hangs times out (504).
	held := make(chan struct{})
	go func() { s.do(t, h, 201, "POST", "/api/orders", mugOrder, withKey("k-held")...); close(held) }()
	<-claimed
	s.do(t, h, 409, "POST", "/api/orders", mugOrder, withKey("k-held")...)
	close(release)
	<-held
	h.SetProvider(t, 0, "after_charge")
	s.do(t, h, 502, "POST", "/api/orders", mugOrder, withKey("k-6")...)
	h.SetProvider(t, 0, "timeout")
	s.do(t, h, 504, "POST", "/api/orders", mugOrder, withKey("k-7")...)
	h.SetProvider(t, 0, "none")

	s.do(t, h, 200, "GET", "/api/orders", "", auth...)
	s.do(t, h, 401, "GET", "/api/orders", "")
	s.do(t, h, 200, "GET", "/api/orders/"+receipt.OrderID, "", auth...)
	s.do(t, h, 404, "GET", "/api/orders/01a22945-6a32-7100-a52a-213ce59c3279", "", auth...)
	s.do(t, h, 200, "GET", "/api/keys/k-1/events", "", auth...)
	s.do(t, h, 200, "GET", "/api/customers/me", "", auth...)
	s.do(t, h, 401, "GET", "/api/customers/me", "")
	s.do(t, h, 200, "GET", "/api/keys/k-6/events", "", auth...)
	s.do(t, h, 400, "GET", "/api/keys/"+strings.Repeat("k", 256)+"/events", "", auth...)

	// Carts: naturally idempotent writes, and an order keyed by version.
	cart := "/api/carts/" + uuid.NewString()
	s.do(t, h, 200, "PUT", cart, `{"items":[{"sku":"mug-espresso","quantity":1}]}`, auth...)
	s.do(t, h, 400, "PUT", cart, `{"items":[{"sku":"no-such-thing","quantity":1}]}`, auth...)
	s.do(t, h, 415, "PUT", cart, `x`, append([]string{"Content-Type", "text/plain"}, auth...)...)
	s.do(t, h, 200, "PUT", cart+"/items/book-retries", `{"quantity":2}`, auth...)
	s.do(t, h, 400, "PUT", cart+"/items/book-retries", `{}`, auth...)
	s.do(t, h, 204, "DELETE", cart+"/items/book-retries", "", auth...)
	s.do(t, h, 200, "GET", cart, "", auth...)
	s.do(t, h, 401, "GET", cart, "")
	s.do(t, h, 404, "GET", "/api/carts/not-a-uuid", "", auth...)
	s.do(t, h, 412, "POST", cart+"/order", "", append([]string{"If-Match", `"99"`}, auth...)...)
	s.do(t, h, 201, "POST", cart+"/order", "", auth...)
	if r := s.do(t, h, 201, "POST", cart+"/order", "", auth...); r.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("cart order again: got Idempotent-Replayed %q, want true", r.Header.Get("Idempotent-Replayed"))
	}
	s.do(t, h, 409, "PUT", cart, `{"items":[{"sku":"mug-espresso","quantity":3}]}`, auth...)
	s.do(t, h, 409, "POST", cart+"/order", "", withKey("k-cart-other")...)

	// A pickup reservation: a key under the kit's middleware.
	pickup := s.do(t, h, 201, "POST", "/api/pickups", `{"slot":"mon-am","name":"Ada"}`, withKey("k-pickup")...)
	if r := s.do(t, h, 201, "POST", "/api/pickups", `{"name":"Ada","slot":"mon-am"}`, withKey("k-pickup")...); r.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("pickup again: got Idempotent-Replayed %q, want true", r.Header.Get("Idempotent-Replayed"))
	}
	s.do(t, h, 422, "POST", "/api/pickups", `{"slot":"mon-pm","name":"Ada"}`, withKey("k-pickup")...)
	s.do(t, h, 400, "POST", "/api/pickups", `{"slot":"mon-am","name":"Ada"}`, auth...)
	s.do(t, h, 400, "POST", "/api/pickups", `{"slot":"sun-am","name":"Ada"}`, withKey("k-pickup-2")...)
	s.do(t, h, 200, "GET", pickup.Header.Get("Location"), "", auth...)
	s.do(t, h, 404, "GET", "/api/pickups/999999", "", auth...)
	s.do(t, h, 401, "GET", "/api/pickups/1", "")

	for _, k := range problem.Kinds {
		s.do(t, h, 200, "GET", "/problems/"+k.Slug, "")
	}
	s.do(t, h, 421, "GET", "/api/products", "", "Host", "elsewhere.example")

	// A server that allows one new customer per address answers the
	// second with 429 and Retry-After.
	strict := apptest.New(t, func(c *apptest.Setup) { c.CustomerQuota = web.CustomerQuota{PerMinute: 1, Burst: 1} })
	s.do(t, strict, 201, "POST", "/api/customers", `{}`)
	s.do(t, strict, 429, "POST", "/api/customers", `{}`)
	s.do(t, h, 200, "GET", "/healthz", "")
	s.do(t, h, 200, "GET", "/readyz", "")

	var ops []string
	for _, item := range s.doc.Paths.Map() {
		for _, op := range item.Operations() {
			ops = append(ops, op.OperationID)
		}
	}
	for _, id := range ops {
		if !s.hit[id] {
			t.Errorf("operation %s is documented but no test response exercised it", id)
		}
	}
	for _, rt := range h.App.Echo.Routes() {
		if !isAPIRoute(rt.Path) || rt.Method == echo.RouteNotFound || rt.Name == web.RefusedMethodRoute || rt.Name == web.OptionsRoute {
			continue
		}
		path := echoToOpenAPI(rt.Path)
		item := s.doc.Paths.Value(path)
		if item == nil || item.GetOperation(rt.Method) == nil {
			t.Errorf("route %s %s is served but not in openapi.json", rt.Method, path)
		}
	}
}

// isAPIRoute says whether a route belongs to the JSON API the description
// covers: /api, the problem pages and the probes. /metrics is Prometheus
// text and the pages are HTML.
func isAPIRoute(path string) bool {
	return strings.HasPrefix(path, "/api/") || strings.HasPrefix(path, "/problems/") || path == "/healthz" || path == "/readyz"
}

// echoToOpenAPI turns /api/orders/:id into /api/orders/{id}.
func echoToOpenAPI(path string) string {
	parts := strings.Split(path, "/")
	for i, p := range parts {
		if name, ok := strings.CutPrefix(p, ":"); ok {
			parts[i] = "{" + name + "}"
		}
	}
	return strings.Join(parts, "/")
}

// TestOpenAPIListsEveryProblemType compares the description's problem types
// with the server's: the same slugs with the same statuses, and each one
// documented as a possible answer of at least one operation with that status.
func TestOpenAPIListsEveryProblemType(t *testing.T) {
	s := loadSpec(t)
	var listed []struct {
		Type, Title string
		Status      int
	}
	raw, _ := json.Marshal(s.doc.Extensions["x-problem-types"])
	if err := json.Unmarshal(raw, &listed); err != nil {
		t.Fatalf("x-problem-types: %v", err)
	}
	documented := map[string]int{}
	titles := map[string]string{}
	for _, p := range listed {
		documented[p.Type] = p.Status
		titles[p.Type] = p.Title
	}
	answered := answeredProblems(s.doc)
	for _, k := range problem.Kinds {
		typ := "/problems/" + k.Slug
		if got, ok := documented[typ]; !ok || got != k.Status {
			t.Errorf("%s: got status %d in x-problem-types (listed %v), want %d", typ, got, ok, k.Status)
		}
		if got := titles[typ]; got != k.Title {
			t.Errorf("%s: got title %q in x-problem-types, want %q", typ, got, k.Title)
		}
		// 405 can answer any route, as the description's info says.
		if k != problem.MethodNotAllowed && !slices.Contains(answered[k.Status], typ) {
			t.Errorf("%s: no operation documents it as a %d answer", typ, k.Status)
		}
	}
	if len(listed) != len(problem.Kinds) {
		t.Errorf("got %d problem types in openapi.json, want the server's %d", len(listed), len(problem.Kinds))
	}
}

// answeredProblems maps each status to the problem types that operations
// document for it, read from the type enums of their problem responses.
func answeredProblems(doc *openapi3.T) map[int][]string {
	out := map[int][]string{}
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			for code, resp := range op.Responses.Map() {
				mt := resp.Value.Content.Get(problem.ContentType)
				if mt == nil {
					continue
				}
				var status int
				if err := json.Unmarshal([]byte(code), &status); err != nil {
					continue
				}
				for _, sub := range append([]*openapi3.SchemaRef{mt.Schema}, mt.Schema.Value.AllOf...) {
					if p := sub.Value.Properties["type"]; p != nil {
						for _, e := range p.Value.Enum {
							out[status] = append(out[status], e.(string))
						}
					}
				}
			}
		}
	}
	return out
}

// TestOpenAPIKeyHeaderSchema checks the Idempotency-Key schema against the
// server's parser: a Structured Field string or a bare key of 1 to 255
// characters passes, what the server refuses does not.
func TestOpenAPIKeyHeaderSchema(t *testing.T) {
	s := loadSpec(t)
	schema := s.doc.Components.Schemas["IdempotencyKey"].Value
	for value, want := range map[string]bool{
		`"8e03978e-40d5-43e8-bc93-6894a57f9324"`: true,
		`8e03978e-40d5-43e8-bc93-6894a57f9324`:   true,
		`"with \"escaped\" quotes"`:              true,
		`"` + strings.Repeat("k", 255) + `"`:     true,
		strings.Repeat("k", 255):                 true,
		`"unterminated`:                          false,
		`""`:                                     false,
		`"` + strings.Repeat("k", 256) + `"`:     false,
		strings.Repeat("k", 256):                 false,
	} {
		err := schema.VisitJSON(value, openapi3.EnableJSONSchema2020())
		if got := err == nil; got != want {
			t.Errorf("Idempotency-Key %.40q: got valid %v, want %v (%v)", value, got, want, err)
		}
	}
}

// TestOpenAPIDuringADatabaseOutage stops the application's own PostgreSQL
// under a running server and validates the answers against the
// description: 503 service-unavailable with Retry-After from the routes
// that need the database, and the red readiness probe.
func TestOpenAPIDuringADatabaseOutage(t *testing.T) {
	s := loadSpec(t)
	ctx := context.Background()
	dir, err := os.MkdirTemp("/tmp", "openapi-outage-")
	if err != nil {
		t.Fatal(err)
	}
	pg, err := localpg.Start(ctx, localpg.Options{DataDir: dir, Throwaway: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pg.Stop(context.Background()) })
	pool, err := database.Open(ctx, pg.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := database.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if err := fakestripe.Migrate(ctx, pool); err != nil { // the fake's schema, for its server (stripetest)
		t.Fatal(err)
	}
	h := apptest.NewOnPool(t, pool)
	cust := h.NewCustomer(t)
	auth := []string{"Authorization", "Bearer " + cust.Token}
	if err := pg.Stop(ctx); err != nil {
		t.Fatal(err)
	}

	s.do(t, h, 503, "POST", "/api/customers", `{}`)
	s.do(t, h, 503, "POST", "/api/orders", mugOrder, append([]string{"Idempotency-Key", `"outage"`}, auth...)...)
	s.do(t, h, 503, "GET", "/api/orders", "", auth...)
	s.do(t, h, 503, "GET", "/readyz", "")
}
