package payment_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/stripe/stripe-go/v85"

	"exactlyonce/fakestripe"
	"exactlyonce/internal/payment"
	"exactlyonce/internal/stripetest"
)

// TestContract runs every call of the payment client against the fake
// Stripe through a recording proxy, and checks each request the SDK sent
// and each answer the fake gave against Stripe's published OpenAPI
// description (testdata/stripe-openapi.json: Stripe's spec3.json trimmed to
// the operations the shop calls by bench/cmd/stripe-openapi; see there for the
// version), as if the exchange had been with api.stripe.com: the path and
// method must be Stripe's, the form parameters ones Stripe takes, with the
// types it takes; an answer must be of the operation's schema (an error
// answer of Stripe's error object), every field the schema requires
// present. The webhook events the fake sent meanwhile are checked against
// the event object, and the object each carries against its own schema.
//
// It covers: create (with and without confirm=true), its replay and its
// key reused with other parameters (400 idempotency_error) or in use by a
// concurrent request (409 idempotency_error, Stripe-Should-Retry: true);
// confirm, succeeding or declined (402 card_error, with the test card's
// PaymentMethod); retrieve, and of an unknown id (404); cancel, of an
// intent that can be canceled, and of one that succeeded (400
// payment_intent_unexpected_state) and the late confirm of a canceled one;
// the list read page by page (starting_after while has_more); a refund,
// its replay and a second refund under another key (400
// charge_already_refunded).
//
// Beyond the schema, the test asserts present every field the shop reads
// (see shopReads), so that a fake that satisfies Stripe's schema but drops
// a field the shop depends on still fails: the schema requires few of them
// (a PaymentIntent only its id, object, created, livemode and status).
//
// The description is of Stripe's API version 2026-08-26.dahlia (the one
// stripe-mock v0.203.0 embeds, the newest in the module proxy): of the
// SDK's release, five months newer than its pinned 2026-03-25.dahlia
// (stripe.APIVersion), which the fake's events name. Within a release
// Stripe makes additive changes only, so a request or an answer of the
// pinned version fits the newer description; every field of shopReads is
// in it (TestShopReadsAreStripes) and in the SDK's types, with which the
// shop decodes them.
func TestContract(t *testing.T) {
	t.Parallel()
	stripetest.EachStore(t, func(t *testing.T, store stripetest.Store) {
		spec := loadStripeSpec(t)
		hooks := &hookRecorder{}
		hookSrv := httptest.NewServer(hooks)
		t.Cleanup(hookSrv.Close)
		s := store.Start(t, fakestripe.WithWebhooks(hookSrv.URL, "whsec_contract"))
		rec := newExchangeRecorder(t, s.URL)
		c := payment.NewClient(payment.Config{SecretKey: stripetest.Secret, APIBase: rec.URL, Timeout: 5 * time.Second})
		ctx := t.Context()

		// create, replayed, then with other parameters under the same key
		in, err := c.CreateIntent(ctx, request("contract-1"))
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		if _, err := c.CreateIntent(ctx, request("contract-1")); err != nil {
			t.Fatalf("create again: %v", err)
		}
		other := request("contract-1")
		other.Amount++
		wantProviderError(t, "create with other parameters", errOf(c.CreateIntent(ctx, other)), http.StatusBadRequest, "idempotency_error")

		// the key in use by a request still running
		release, err := s.HoldKey(ctx, "contract-busy")
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.CreateIntent(ctx, request("contract-busy"))
		release()
		wantProviderError(t, "create while the key is in use", err, http.StatusConflict, "idempotency_error")

		// confirm: succeeded, then replayed
		pm, _ := payment.PaymentMethod(payment.SucceedingCard)
		if _, err := c.ConfirmIntent(ctx, in.ID, "contract-1/confirm", pm, ""); err != nil {
			t.Fatalf("confirm: %v", err)
		}
		if _, err := c.ConfirmIntent(ctx, in.ID, "contract-1/confirm", pm, ""); err != nil {
			t.Fatalf("confirm again: %v", err)
		}

		// a declined card
		declined, err := c.CreateIntent(ctx, request("contract-2"))
		if err != nil {
			t.Fatal(err)
		}
		bad, _ := payment.PaymentMethod(payment.DeclinedCard)
		var de *payment.DeclinedError
		if _, err := c.ConfirmIntent(ctx, declined.ID, "contract-2/confirm", bad, ""); !errors.As(err, &de) {
			t.Errorf("confirm with the declined card: got %v, want a decline", err)
		}

		// create with confirm=true: the one-call pattern
		one := request("contract-3")
		one.PaymentMethod, one.Confirm = pm, true
		if _, err := c.CreateIntent(ctx, one); err != nil {
			t.Fatalf("create with confirm: %v", err)
		}

		// retrieve, and an unknown id
		if _, err := c.RetrieveIntent(ctx, in.ID); err != nil {
			t.Fatalf("retrieve: %v", err)
		}
		_, err = c.RetrieveIntent(ctx, "pi_unknown")
		wantProviderError(t, "retrieve an unknown id", err, http.StatusNotFound, "invalid_request_error")

		// cancel; cancel of a succeeded intent; the late confirm of a canceled one
		abandoned, err := c.CreateIntent(ctx, request("contract-4"))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := c.CancelIntent(ctx, abandoned.ID, "contract-4/cancel"); err != nil || got.Status != payment.StatusCanceled {
			t.Fatalf("cancel: got %+v, %v", got, err)
		}
		if got, err := c.CancelIntent(ctx, in.ID, "contract-1/cancel"); err != nil || got.Status != payment.StatusSucceeded {
			t.Fatalf("cancel a succeeded intent: got %+v, %v, want it succeeded", got, err)
		}
		if _, err := c.ConfirmIntent(ctx, abandoned.ID, "contract-4/confirm", pm, ""); !errors.Is(err, payment.ErrCanceled) {
			t.Errorf("late confirm: got %v, want ErrCanceled", err)
		}

		// the list, two a page
		listed, err := c.ListIntents(ctx, 0, 2)
		if err != nil || len(listed) != 4 {
			t.Fatalf("list: got %d intents, %v, want 4", len(listed), err)
		}

		// refund, its replay, another refund under another key
		if _, err := c.Refund(ctx, "refund_"+in.ID, in.ID); err != nil {
			t.Fatalf("refund: %v", err)
		}
		if _, err := c.Refund(ctx, "refund_"+in.ID, in.ID); err != nil {
			t.Fatalf("refund again: %v", err)
		}
		if _, err := c.Refund(ctx, "another", in.ID); !errors.Is(err, payment.ErrAlreadyRefunded) {
			t.Errorf("refund under another key: got %v, want ErrAlreadyRefunded", err)
		}

		// Every exchange, against the spec; then the statuses seen, so that a
		// change that stops an error answer from happening fails here too.
		statuses := map[string]bool{}
		for _, x := range rec.all() {
			for _, p := range spec.check(x) {
				t.Error(p)
			}
			statuses[fmt.Sprintf("%s %d", x.route, x.status)] = true
		}
		for _, want := range []string{
			"POST /v1/payment_intents 200", "POST /v1/payment_intents 400", "POST /v1/payment_intents 409",
			"POST /v1/payment_intents/{intent}/confirm 200", "POST /v1/payment_intents/{intent}/confirm 402",
			"POST /v1/payment_intents/{intent}/confirm 400",
			"GET /v1/payment_intents/{intent} 200", "GET /v1/payment_intents/{intent} 404",
			"POST /v1/payment_intents/{intent}/cancel 200", "POST /v1/payment_intents/{intent}/cancel 400",
			"GET /v1/payment_intents 200", "POST /v1/refunds 200", "POST /v1/refunds 400",
		} {
			if !statuses[want] {
				t.Errorf("no exchange %s was made", want)
			}
		}
		if pages := rec.count("GET /v1/payment_intents", func(x exchange) bool { return x.query.Get("starting_after") != "" }); pages != 1 {
			t.Errorf("the list was read in %d pages after the first, want 1 (4 intents, 2 a page)", pages)
		}

		// The webhooks: one event for each change of an intent and the refund.
		events := hooks.wait(t, map[string]int{
			"payment_intent.succeeded": 2, "payment_intent.payment_failed": 1,
			"payment_intent.canceled": 1, "charge.refunded": 1,
		})
		for _, ev := range events {
			for _, p := range spec.checkEvent(ev) {
				t.Error(p)
			}
		}
	})
}

// TestShopReadsAreStripes checks that every field the shop reads is a
// property of its object in Stripe's description: a field of the fake's
// own invention would pass the schemas (they allow more), but not this.
func TestShopReadsAreStripes(t *testing.T) {
	t.Parallel()
	spec := loadStripeSpec(t)
	for object, fields := range shopReads {
		name := object
		if object == "list" {
			name = "" // a list's fields are checked against the list operation's schema below
		}
		for _, path := range fields {
			var schema *openapi3.Schema
			if name != "" {
				schema = spec.schema(name)
			} else {
				schema = spec.doc.Paths.Value("/v1/payment_intents").Get.Responses.Status(http.StatusOK).Value.Content.Get("application/json").Schema.Value
			}
			for _, field := range strings.Split(path, ".") {
				prop, ok := schema.Properties[field]
				if !ok && schema.AdditionalProperties.Schema != nil {
					prop, ok = schema.AdditionalProperties.Schema, true // metadata's keys are the shop's own
				}
				if !ok {
					t.Errorf("%s.%s: Stripe's %s has no %s", object, path, object, field)
					break
				}
				schema = prop.Value
				for len(schema.AnyOf) == 1 && schema.AnyOf[0].Value != nil && len(schema.Properties) == 0 {
					schema = schema.AnyOf[0].Value
				}
			}
		}
	}
}

// TestContractCatches proves the contract test's checks can fail: each
// exchange or event here breaks the contract in one way, and must be
// caught.
func TestContractCatches(t *testing.T) {
	t.Parallel()
	spec := loadStripeSpec(t)
	auth := http.Header{"Authorization": {"Bearer " + stripetest.Secret}, "Content-Type": {"application/x-www-form-urlencoded"}}
	intent := `{"id":"pi_1","object":"payment_intent","amount":100,"currency":"eur","status":"succeeded","created":1,"livemode":false,` +
		`"last_payment_error":null,"metadata":{"customer_id":"c","idempotency_key":"k","operation_id":"o"}}`
	create := func(form, answer string) exchange {
		return exchange{method: http.MethodPost, path: "/v1/payment_intents", route: "POST /v1/payment_intents",
			reqHeader: auth, reqBody: []byte(form), status: http.StatusOK,
			header: http.Header{"Content-Type": {"application/json"}, "Request-Id": {"req_1"}}, body: []byte(answer)}
	}
	good := create("amount=100&currency=eur&metadata[idempotency_key]=k&payment_method_types[0]=card", intent)
	if p := spec.check(good); len(p) != 0 {
		t.Fatalf("a good exchange: %v", p)
	}
	for name, x := range map[string]exchange{
		"an unknown parameter":              create("amount=100&currency=eur&card_number=4242424242424242", intent),
		"a parameter of the wrong type":     create("amount=lots&currency=eur", intent),
		"a required parameter missing":      create("currency=eur", intent),
		"an answer of the wrong type":       create("amount=100&currency=eur", strings.Replace(intent, `"amount":100`, `"amount":"100"`, 1)),
		"an answer lacking a field it must": create("amount=100&currency=eur", strings.Replace(intent, `"status":"succeeded",`, "", 1)),
		"an answer lacking what the shop reads": create("amount=100&currency=eur",
			strings.Replace(intent, `"operation_id":"o"`, `"op":"o"`, 1)),
		"an error answer not Stripe's": func() exchange {
			x := create("amount=100&currency=eur", `{"message":"no"}`)
			x.status = http.StatusBadRequest
			return x
		}(),
		"no Request-Id":               func() exchange { x := good; x.header = http.Header{"Content-Type": {"application/json"}}; return x }(),
		"a path Stripe does not have": func() exchange { x := good; x.path = "/v1/charges"; return x }(),
	} {
		if p := spec.check(x); len(p) == 0 {
			t.Errorf("%s: not caught", name)
		}
	}
	event := `{"id":"evt_1","object":"event","api_version":"` + stripe.APIVersion + `","created":1,"livemode":false,"pending_webhooks":1,` +
		`"request":{"id":null,"idempotency_key":null},"type":"payment_intent.succeeded","data":{"object":` + intent + `}}`
	if p := spec.checkEvent([]byte(event)); len(p) != 0 {
		t.Fatalf("a good event: %v", p)
	}
	for name, ev := range map[string]string{
		"an event lacking its id":     strings.Replace(event, `"id":"evt_1",`, "", 1),
		"an object of the wrong type": strings.Replace(event, `"amount":100`, `"amount":"100"`, 1),
		"an object of the wrong kind": strings.Replace(event, `"object":"payment_intent"`, `"object":"charge"`, 1),
		"another API version":         strings.Replace(event, stripe.APIVersion, "2020-08-27", 1),
	} {
		if p := spec.checkEvent([]byte(ev)); len(p) == 0 {
			t.Errorf("%s: not caught", name)
		}
	}
}

// errOf keeps the error of a call whose intent is not wanted.
func errOf(_ payment.Intent, err error) error { return err }

func wantProviderError(t *testing.T, what string, err error, status int, typ string) {
	t.Helper()
	var pe *payment.ProviderError
	if !errors.As(err, &pe) || pe.Status != status || pe.Type != typ {
		t.Errorf("%s: got %v, want a %d %s", what, err, status, typ)
	}
}

// shopReads are the fields the shop reads from each object it gets from
// Stripe, by the schema's name (the SDK decodes more; these are the ones
// the shop's code uses: internal/payment, internal/stripehook,
// internal/lifecycle): a field in a nested object is a dotted path, a field
// that is null in some states is in nullable.
var shopReads = map[string][]string{
	// intentOf; the metadata of issue 28 (customer, key, operation)
	"payment_intent": {"id", "amount", "currency", "status", "created", "metadata.customer_id",
		"metadata.idempotency_key", "metadata.operation_id", "last_payment_error"},
	// classify: an error's type, code, message, the declined charge and
	// the intent inside a decline or an unexpected state
	"error": {"error.type", "error.message"},
	// Refund
	"refund": {"id", "amount", "payment_intent"},
	// the list's paging
	"list": {"data", "has_more"},
	// stripehook.Handle: the event, and a refunded charge's intent and
	// metadata
	"event":  {"id", "type", "created", "data.object"},
	"charge": {"id", "payment_intent", "metadata"},
}

// nullable are fields of shopReads that are null in some states, such as
// last_payment_error before a decline: present, maybe null.
var nullable = map[string]bool{"last_payment_error": true}

// stripeSpec is the trimmed description, loaded by kin-openapi.
type stripeSpec struct {
	doc    *openapi3.T
	router routers.Router
}

func loadStripeSpec(tb testing.TB) *stripeSpec {
	tb.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromFile("testdata/stripe-openapi.json")
	if err != nil {
		tb.Fatalf("load the Stripe spec: %v", err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		tb.Fatalf("the Stripe spec is not a valid OpenAPI document: %v", err)
	}
	// kin-openapi cannot decode an array in the query in the deepObject
	// style (expand[0]=…), and refuses the parameter's definition even
	// when a request does not send it. The SDK sends expand only when
	// asked to expand, which the shop never does: such a parameter is read
	// as a form array instead.
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			for _, p := range op.Parameters {
				if v := p.Value; v.In == openapi3.ParameterInQuery && v.Style == openapi3.SerializationDeepObject &&
					v.Schema.Value.Type.Is(openapi3.TypeArray) {
					v.Style = openapi3.SerializationForm
				}
			}
		}
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		tb.Fatalf("router: %v", err)
	}
	return &stripeSpec{doc: doc, router: router}
}

// schemaOptions report every mismatch of a value, without the schema and
// the value (which are long, and in the test's output anyway).
var schemaOptions = []openapi3.SchemaValidationOption{openapi3.MultiErrors(), openapi3.DisableSchemaErrorDetails()}

// bearer accepts the SDK's credentials, Authorization: Bearer <secret key>,
// for the spec's bearerAuth, and nothing for its basicAuth: the SDK sends
// the first.
func bearer(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	if in.SecuritySchemeName == "bearerAuth" && strings.HasPrefix(in.RequestValidationInput.Request.Header.Get("Authorization"), "Bearer ") {
		return nil
	}
	return errors.New("no bearer token")
}

// check validates one exchange as if it had been with api.stripe.com, and
// returns what does not match.
func (s *stripeSpec) check(x exchange) []string {
	var problems []string
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	req, err := http.NewRequest(x.method, "https://api.stripe.com"+x.path+"?"+x.query.Encode(), bytes.NewReader(x.reqBody))
	if err != nil {
		return []string{err.Error()}
	}
	req.Header = x.reqHeader.Clone()
	route, params, err := s.router.FindRoute(req)
	if err != nil {
		return []string{fmt.Sprintf("%s %s: not an operation of Stripe's the shop uses: %v", x.method, x.path, err)}
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: bearer, MultiError: true, SchemaValidationOptions: schemaOptions}}
	if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
		fail("%s %s with %s: the request is not Stripe's: %v", x.method, x.path, x.reqBody, err)
	}
	for _, name := range unknownParameters(route.Operation, x) {
		fail("%s %s with %s: Stripe has no parameter %s", x.method, x.path, x.reqBody, name)
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: x.status, Header: x.header,
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true, SchemaValidationOptions: schemaOptions}}
	out.SetBodyBytes(x.body)
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		fail("%s %s → %d %s: the answer is not Stripe's: %v", x.method, x.path, x.status, x.body, err)
	}
	if x.header.Get("Request-Id") == "" {
		fail("%s %s → %d: no Request-Id", x.method, x.path, x.status)
	}
	var body map[string]any
	if err := json.Unmarshal(x.body, &body); err != nil {
		return append(problems, fmt.Sprintf("%s %s → %d: %v", x.method, x.path, x.status, err))
	}
	switch {
	case x.status != http.StatusOK:
		problems = append(problems, missingFields(x.route, "error", body)...)
		if x.status == http.StatusConflict && x.header.Get("Stripe-Should-Retry") != "true" {
			fail("%s → 409 without Stripe-Should-Retry: true", x.route)
		}
		e, _ := body["error"].(map[string]any)
		if pi, ok := e["payment_intent"].(map[string]any); ok {
			problems = append(problems, missingFields(x.route+" (the intent in the error)", "payment_intent", pi)...)
		}
	case body["object"] == "list":
		problems = append(problems, missingFields(x.route, "list", body)...)
		data, _ := body["data"].([]any)
		for _, pi := range data {
			m, _ := pi.(map[string]any)
			problems = append(problems, missingFields(x.route+" (an intent listed)", "payment_intent", m)...)
		}
	default:
		object, _ := body["object"].(string)
		problems = append(problems, missingFields(x.route, object, body)...)
	}
	return problems
}

// unknownParameters are the parameters of a request that its operation
// does not declare. kin-openapi decodes a form body by the schema's
// properties and so never sees another parameter, which Stripe refuses
// (parameter_unknown): a name is the part before its first bracket
// (metadata[k], payment_method_types[0]).
func unknownParameters(op *openapi3.Operation, x exchange) []string {
	known := map[string]bool{}
	for _, p := range op.Parameters {
		known[p.Value.Name] = true
	}
	if op.RequestBody != nil {
		for _, mt := range op.RequestBody.Value.Content {
			for name := range mt.Schema.Value.Properties {
				known[name] = true
			}
		}
	}
	sent := url.Values{}
	maps.Copy(sent, x.query)
	if form, err := url.ParseQuery(string(x.reqBody)); err == nil {
		maps.Copy(sent, form)
	}
	var unknown []string
	for name := range sent {
		if base, _, _ := strings.Cut(name, "["); !known[base] {
			unknown = append(unknown, name)
		}
	}
	slices.Sort(unknown)
	return unknown
}

// checkEvent validates one webhook event against Stripe's event object and
// the object it carries against that object's schema, and returns what
// does not match.
func (s *stripeSpec) checkEvent(payload []byte) []string {
	var ev map[string]any
	if err := json.Unmarshal(payload, &ev); err != nil {
		return []string{fmt.Sprintf("event: %v", err)}
	}
	var problems []string
	typ, _ := ev["type"].(string)
	if err := s.schema("event").VisitJSON(ev, schemaOptions...); err != nil {
		problems = append(problems, fmt.Sprintf("%s: the event is not Stripe's event object: %v", typ, err))
	}
	problems = append(problems, missingFields(typ, "event", ev)...)
	if ev["api_version"] != stripe.APIVersion {
		problems = append(problems, fmt.Sprintf("%s: api_version %v, want the SDK's %s", typ, ev["api_version"], stripe.APIVersion))
	}
	data, _ := ev["data"].(map[string]any)
	object, _ := data["object"].(map[string]any)
	name, _ := object["object"].(string)
	if want := strings.Split(typ, ".")[0]; name != want {
		return append(problems, fmt.Sprintf("%s carries a %q, want a %s", typ, name, want))
	}
	if err := s.schema(name).VisitJSON(object, schemaOptions...); err != nil {
		problems = append(problems, fmt.Sprintf("%s: its object is not Stripe's %s: %v", typ, name, err))
	}
	return append(problems, missingFields(typ+" (its object)", name, object)...)
}

// schema returns a schema of the spec; one it lacks accepts nothing.
func (s *stripeSpec) schema(name string) *openapi3.Schema {
	if ref, ok := s.doc.Components.Schemas[name]; ok {
		return ref.Value
	}
	return &openapi3.Schema{Not: openapi3.NewSchemaRef("", openapi3.NewSchema())}
}

// missingFields lists the fields of shopReads[object] missing from v (null
// counts as missing, unless the field is nullable).
func missingFields(where, object string, v map[string]any) []string {
	var missing []string
	for _, path := range shopReads[object] {
		var cur any = v
		present := true
		for _, name := range strings.Split(path, ".") {
			m, ok := cur.(map[string]any)
			if !ok {
				present = false
				break
			}
			if cur, ok = m[name]; !ok {
				present = false
				break
			}
		}
		if !present || cur == nil && !nullable[path] {
			missing = append(missing, fmt.Sprintf("%s: the %s lacks %s, which the shop reads", where, object, path))
		}
	}
	return missing
}

// exchange is one request the SDK sent and the answer it got.
type exchange struct {
	method, path, route string
	query               url.Values
	reqHeader           http.Header
	reqBody             []byte
	status              int
	header              http.Header
	body                []byte
}

// exchangeRecorder is a reverse proxy in front of the fake that records
// every exchange.
type exchangeRecorder struct {
	URL string
	mu  sync.Mutex
	xs  []exchange
}

func newExchangeRecorder(tb testing.TB, target string) *exchangeRecorder {
	tb.Helper()
	to, err := url.Parse(target)
	if err != nil {
		tb.Fatal(err)
	}
	r := &exchangeRecorder{}
	proxy := &httputil.ReverseProxy{
		Rewrite:   func(pr *httputil.ProxyRequest) { pr.SetURL(to) },
		Transport: r,
	}
	srv := httptest.NewServer(proxy)
	tb.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

// RoundTrip forwards one request to the fake and records it with its
// answer.
func (r *exchangeRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		var err error
		if body, err = io.ReadAll(req.Body); err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	answer, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(answer))
	x := exchange{method: req.Method, path: req.URL.Path, query: req.URL.Query(), reqHeader: req.Header.Clone(),
		reqBody: body, status: resp.StatusCode, header: resp.Header.Clone(), body: answer}
	x.route = req.Method + " " + routeOf(req.URL.Path)
	r.mu.Lock()
	r.xs = append(r.xs, x)
	r.mu.Unlock()
	return resp, nil
}

// routeOf names a path by its route in the spec.
func routeOf(path string) string {
	parts := strings.Split(path, "/")
	if len(parts) >= 4 && parts[2] == "payment_intents" {
		parts[3] = "{intent}"
	}
	return strings.Join(parts, "/")
}

func (r *exchangeRecorder) all() []exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]exchange(nil), r.xs...)
}

func (r *exchangeRecorder) count(route string, match func(exchange) bool) int {
	n := 0
	for _, x := range r.all() {
		if x.route == route && match(x) {
			n++
		}
	}
	return n
}

// hookRecorder is the webhook endpoint: it records every payload.
type hookRecorder struct {
	mu       sync.Mutex
	payloads [][]byte
}

func (h *hookRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	h.payloads = append(h.payloads, b)
	h.mu.Unlock()
}

// wait returns the payloads once the events of each type have arrived as
// often as want says, or fails the test after a few seconds.
func (h *hookRecorder) wait(t *testing.T, want map[string]int) [][]byte {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		h.mu.Lock()
		payloads := append([][]byte(nil), h.payloads...)
		h.mu.Unlock()
		got := map[string]int{}
		for _, p := range payloads {
			var ev struct{ Type string }
			if json.Unmarshal(p, &ev) == nil {
				got[ev.Type]++
			}
		}
		done := true
		for typ, n := range want {
			if got[typ] < n {
				done = false
			}
		}
		if done {
			return payloads
		}
		if time.Now().After(deadline) {
			t.Fatalf("webhooks: got %v, want %v", got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
