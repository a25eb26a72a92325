package api_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"exactlyonce/internal/apptest"
	"exactlyonce/internal/problem"
)

// An API order with a return_url whose card's bank asks for 3-D Secure:
// 202 with the bank's page (next_action, as Stripe shows it), nothing
// charged or stored; the same request again asks how it stands (the same
// 202), another return_url under the key is 422; once the card holder has
// completed at the bank, the same request gets the order, 201, stored and
// replayed. One order, one charge. A failed authentication is the stored
// decline. A return_url that is not an absolute URL is a 400 that stores
// nothing. Every answer matches api/openapi.json.
func TestOrderThatAsksForAuthentication(t *testing.T) {
	t.Parallel()
	s := loadSpec(t)
	h := apptest.New(t, apptest.WithoutWebhooks)
	c := h.NewCustomer(t)
	order := func(returnURL string) string {
		return `{"items":[{"sku":"mug-espresso","quantity":1}],"card":"4000 0027 6000 3184","return_url":"` + returnURL + `"}`
	}
	const back = "https://client.example/paid?order=1"
	post := func(want int, key, body string) apptest.Response {
		t.Helper()
		return s.do(t, h, want, http.MethodPost, "/api/orders", body, "Authorization", "Bearer "+c.Token, "Idempotency-Key", key)
	}

	if r := post(http.StatusBadRequest, `"3ds"`, order("/paid")); !strings.Contains(string(r.Body), "return_url") {
		t.Errorf("a relative return_url: got %s, want a 400 naming return_url", r.Body)
	}
	first := post(http.StatusAccepted, `"3ds"`, order(back))
	var asked struct {
		Status        string `json:"status"`
		PaymentIntent string `json:"payment_intent"`
		NextAction    struct {
			Type          string `json:"type"`
			RedirectToURL struct {
				URL       string `json:"url"`
				ReturnURL string `json:"return_url"`
			} `json:"redirect_to_url"`
		} `json:"next_action"`
	}
	if err := json.Unmarshal(first.Body, &asked); err != nil {
		t.Fatal(err)
	}
	bank := asked.NextAction.RedirectToURL.URL
	if asked.Status != "requires_action" || asked.NextAction.Type != "redirect_to_url" || asked.NextAction.RedirectToURL.ReturnURL != back ||
		!strings.HasPrefix(bank, h.ProviderURL+"/3ds/authenticate/"+asked.PaymentIntent) || first.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("the first answer: got %s, want requires_action with the bank's page and the return_url", first.Body)
	}
	h.WantStats(t, 0, 0)
	if again := post(http.StatusAccepted, `"3ds"`, order(back)); string(again.Body) != string(first.Body) {
		t.Errorf("the same request again: got %s, want the same 202 %s", again.Body, first.Body)
	}
	apptest.WantProblem(t, post(http.StatusUnprocessableEntity, `"3ds"`, order("https://client.example/elsewhere")), problem.KeyReused)

	noRedirects := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirects.PostForm(bank, url.Values{"outcome": {"complete"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if to := resp.Header.Get("Location"); !strings.HasPrefix(to, back+"&payment_intent=") {
		t.Fatalf("the bank sent the card holder to %q, want the order's return_url", to)
	}
	paid := post(http.StatusCreated, `"3ds"`, order(back))
	if paid.Header.Get("Idempotent-Replayed") != "" {
		t.Errorf("the order once authenticated: got it marked replayed")
	}
	replay := post(http.StatusCreated, `"3ds"`, order(back))
	if string(replay.Body) != string(paid.Body) || replay.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("a retry: got %s %v, want the order replayed", replay.Body, replay.Header)
	}
	h.WantStats(t, 1, 1)
	// The wait for the bank is on the key's trail, between its claim and
	// its finish (the event was refused by key_events' CHECK until
	// migration 00190, and only logged).
	if got := apptest.EventNames(h.KeyEvents(t, c, "3ds")); !slices.Contains(got, "awaiting_authentication") {
		t.Errorf("the key's trail: got %v, want awaiting_authentication on it", got)
	}

	// Failed at the bank: the same request then gets the decline, stored.
	failing := post(http.StatusAccepted, `"3ds-fail"`, order(back))
	if err := json.Unmarshal(failing.Body, &asked); err != nil {
		t.Fatal(err)
	}
	resp, err = noRedirects.PostForm(asked.NextAction.RedirectToURL.URL, url.Values{"outcome": {"fail"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	apptest.WantProblem(t, post(http.StatusPaymentRequired, `"3ds-fail"`, order(back)), problem.PaymentDeclined)
	if r := post(http.StatusPaymentRequired, `"3ds-fail"`, order(back)); r.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("a retry of the declined order: got %v, want the 402 replayed", r.Header)
	}
	h.WantStats(t, 1, 1)
}

// The completer cancels a key's intent once its card holder failed at the
// bank (the webhook says so) or stayed away past the window; if its finish
// is then lost (its lease lapsed in a stalled database: the long chaos run
// of 7 December), the client's retry takes the key over and finds the
// intent canceled. It must store what the completer would have: the
// decline for a failed authentication, the abandoned authentication with
// its intent otherwise; not "the request was interrupted", which neither
// is, and which told a shopper who failed at the bank that the shop had
// lost their request.
func TestRetryAfterTheCompletersCancelSaysWhy(t *testing.T) {
	t.Parallel()
	s := loadSpec(t)
	h := apptest.New(t, apptest.WithoutWebhooks)
	c := h.NewCustomer(t)
	const body = `{"items":[{"sku":"mug-espresso","quantity":1}],"card":"4000 0027 6000 3184","return_url":"https://client.example/paid"}`
	post := func(want int, key string) apptest.Response {
		t.Helper()
		return s.do(t, h, want, http.MethodPost, "/api/orders", body, "Authorization", "Bearer "+c.Token, "Idempotency-Key", key)
	}
	asked := func(key string) (intent, bank string) {
		t.Helper()
		var a struct {
			PaymentIntent string `json:"payment_intent"`
			NextAction    struct {
				RedirectToURL struct {
					URL string `json:"url"`
				} `json:"redirect_to_url"`
			} `json:"next_action"`
		}
		if err := json.Unmarshal(post(http.StatusAccepted, key).Body, &a); err != nil {
			t.Fatal(err)
		}
		return a.PaymentIntent, a.NextAction.RedirectToURL.URL
	}

	failed, bank := asked(`"failed"`)
	noRedirects := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirects.PostForm(bank, url.Values{"outcome": {"fail"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	h.CancelAtProvider(t, failed)
	if p := apptest.WantProblem(t, post(http.StatusPaymentRequired, `"failed"`), problem.PaymentDeclined); p.ChargeID != failed ||
		!strings.Contains(p.Detail, "authentication") {
		t.Errorf("failed at the bank, canceled by the completer: got %+v, want the decline of %s with the bank's words", p, failed)
	}

	abandoned, _ := asked(`"abandoned"`)
	h.CancelAtProvider(t, abandoned)
	if p := apptest.WantProblem(t, post(http.StatusPaymentRequired, `"abandoned"`), problem.PaymentNotCompleted); p.ChargeID != abandoned ||
		!strings.Contains(p.Detail, "did not authenticate") {
		t.Errorf("never back from the bank, canceled by the completer: got %+v, want not completed naming %s and why", p, abandoned)
	}
	h.WantStats(t, 0, 0)
}

// Past the authentication window, the same request no longer waits for the
// card holder: its intent is canceled, and the answer is the stored 402
// payment-not-completed that names the intent and says why; completing at
// the bank afterwards charges nothing.
func TestOrderPastTheAuthenticationWindow(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, apptest.WithoutWebhooks, func(c *apptest.Setup) { c.AuthenticationWindow = 50 * time.Millisecond })
	c := h.NewCustomer(t)
	body := `{"items":[{"sku":"mug-espresso","quantity":1}],"card":"4000002760003184","return_url":"https://client.example/paid"}`
	first := h.PlaceOrder(t, c, `"late"`, body)
	var asked struct {
		PaymentIntent string `json:"payment_intent"`
		NextAction    struct {
			RedirectToURL struct {
				URL string `json:"url"`
			} `json:"redirect_to_url"`
		} `json:"next_action"`
	}
	if first.Status != http.StatusAccepted {
		t.Fatalf("got %d %s, want 202", first.Status, first.Body)
	}
	first.JSON(t, &asked)
	time.Sleep(100 * time.Millisecond)
	p := apptest.WantProblem(t, h.PlaceOrder(t, c, `"late"`, body), problem.PaymentNotCompleted)
	if p.ChargeID != asked.PaymentIntent || !strings.Contains(p.Detail, "did not authenticate") {
		t.Errorf("got charge_id %q and detail %q, want the intent %s and why", p.ChargeID, p.Detail, asked.PaymentIntent)
	}
	noRedirects := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirects.PostForm(asked.NextAction.RedirectToURL.URL, url.Values{"outcome": {"complete"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	h.WantStats(t, 0, 0)
}
