package stripetest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"exactlyonce/fakestripe"
	"exactlyonce/internal/payment"
	"exactlyonce/internal/stripetest"
)

// The 3-D Secure round trip as Stripe's test mode runs it, against the
// fake over HTTP: a confirm with return_url and a card that asks for
// authentication answers requires_action with next_action.redirect_to_url;
// the bank's page, completed twice at once (a double click), charges once,
// sends one payment_intent.succeeded and sends both clicks back to
// return_url with what Stripe adds; failing it leaves the intent
// requires_payment_method with Stripe's authentication failure, and a
// later completion changes nothing; an intent canceled meanwhile stays
// canceled; with the return lost, the shopper gets an error page but the
// intent succeeds and the webhook goes.
func TestAuthenticationRoundTrip(t *testing.T) {
	t.Parallel()
	stripetest.EachStore(t, func(t *testing.T, store stripetest.Store) {
		var (
			mu     sync.Mutex
			events []string
		)
		hooks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var ev struct {
				Type string `json:"type"`
				Data struct {
					Object struct {
						ID string `json:"id"`
					} `json:"object"`
				} `json:"data"`
			}
			if err := json.NewDecoder(r.Body).Decode(&ev); err == nil {
				mu.Lock()
				events = append(events, ev.Type+" "+ev.Data.Object.ID)
				mu.Unlock()
			}
		}))
		t.Cleanup(hooks.Close)
		s := store.Start(t, fakestripe.WithWebhooks(hooks.URL, "whsec_3ds"))
		c := s.Client(0)
		const returnURL = "https://shop.example/checkout/return?key=k1"

		confirm := func(key, returnURL string) (int, map[string]any) {
			t.Helper()
			in, err := c.CreateIntent(t.Context(), intentRequest(key))
			if err != nil {
				t.Fatal(err)
			}
			form := url.Values{"payment_method": {fakestripe.ActionPaymentMethod}, "return_url": {returnURL}}
			req, _ := http.NewRequest(http.MethodPost, s.URL+"/v1/payment_intents/"+in.ID+"/confirm", strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Authorization", "Bearer "+stripetest.Secret)
			req.Header.Set("Idempotency-Key", key+"/confirm")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body map[string]any
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				t.Fatal(err)
			}
			return resp.StatusCode, body
		}
		noRedirects := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		// decided is the bank page's answer to a click: its status and where
		// it sends the shopper.
		type decided struct {
			StatusCode int
			Location   string
		}
		decide := func(page, outcome string) decided {
			t.Helper()
			resp, err := noRedirects.PostForm(page, url.Values{"outcome": {outcome}})
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			return decided{resp.StatusCode, resp.Header.Get("Location")}
		}
		wantBack := func(resp decided, id, status string) {
			t.Helper()
			loc, err := url.Parse(resp.Location)
			if resp.StatusCode != http.StatusSeeOther || err != nil || loc.Host != "shop.example" || loc.Path != "/checkout/return" ||
				loc.Query().Get("key") != "k1" || loc.Query().Get("payment_intent") != id || loc.Query().Get("redirect_status") != status {
				t.Fatalf("the way back: got %d to %q, want a 303 to the return_url with payment_intent=%s and redirect_status=%s",
					resp.StatusCode, resp.Location, id, status)
			}
		}

		// Completed twice at once: one charge, one webhook, both sent back.
		status, body := confirm("k1", returnURL)
		next, _ := body["next_action"].(map[string]any)
		redirect, _ := next["redirect_to_url"].(map[string]any)
		page, _ := redirect["url"].(string)
		id, _ := body["id"].(string)
		if status != http.StatusOK || body["status"] != payment.StatusRequiresAction || next["type"] != "redirect_to_url" ||
			redirect["return_url"] != returnURL || page != s.URL+"/3ds/authenticate/"+id {
			t.Fatalf("the confirm: got %d %v, want 200, requires_action and a redirect_to_url to the fake's page", status, body)
		}
		shown, err := http.Get(page)
		if err != nil {
			t.Fatal(err)
		}
		html, _ := io.ReadAll(shown.Body)
		shown.Body.Close()
		if shown.StatusCode != http.StatusOK || !strings.Contains(string(html), `data-testid="complete"`) || !strings.Contains(string(html), "49.00 EUR") {
			t.Fatalf("the bank's page: got %d %s, want it to ask to complete 49.00 EUR", shown.StatusCode, html)
		}
		answers := make([]decided, 2)
		var wg sync.WaitGroup
		for i := range answers {
			wg.Go(func() { answers[i] = decide(page, "complete") })
		}
		wg.Wait()
		for _, a := range answers {
			wantBack(a, id, "succeeded")
		}
		in, err := s.Intent(t.Context(), id)
		if err != nil || in.Status != payment.StatusSucceeded || in.LatestCharge == nil {
			t.Fatalf("after completing twice: got %+v, %v; want succeeded with a charge", in, err)
		}
		charge := *in.LatestCharge
		wantBack(decide(page, "complete"), id, "succeeded")
		if in, _ := s.Intent(t.Context(), id); *in.LatestCharge != charge {
			t.Fatalf("a third completion made another charge: %s, then %s", charge, *in.LatestCharge)
		}

		// Failed, then completed: the failure stands, nothing charged.
		_, body = confirm("k2", returnURL)
		failedID, _ := body["id"].(string)
		failedPage := s.URL + "/3ds/authenticate/" + failedID
		wantBack(decide(failedPage, "fail"), failedID, "failed")
		wantBack(decide(failedPage, "complete"), failedID, "failed")
		in, err = s.Intent(t.Context(), failedID)
		if err != nil || in.Status != payment.StatusRequiresPaymentMethod || in.LatestCharge != nil ||
			!strings.Contains(string(in.LastPaymentError), "payment_intent_authentication_failure") {
			t.Fatalf("after failing: got %+v, %v; want requires_payment_method, no charge, Stripe's authentication failure", in, err)
		}

		// Canceled while the shopper was at the bank: it stays canceled.
		_, body = confirm("k3", returnURL)
		canceledID, _ := body["id"].(string)
		if _, err := c.CancelIntent(t.Context(), canceledID, "k3/cancel"); err != nil {
			t.Fatal(err)
		}
		wantBack(decide(s.URL+"/3ds/authenticate/"+canceledID, "complete"), canceledID, "failed")
		if in, _ := s.Intent(t.Context(), canceledID); in.Status != payment.StatusCanceled {
			t.Fatalf("a completion after a cancel: got %s, want canceled", in.Status)
		}

		// The return lost: the shopper never comes back, the intent succeeds,
		// the webhook goes.
		s.SetBehaviour(t, fakestripe.Behaviour{Authentication: fakestripe.AuthenticationFaults{LoseReturn: true}})
		_, body = confirm("k4", returnURL)
		lostID, _ := body["id"].(string)
		if resp := decide(s.URL+"/3ds/authenticate/"+lostID, "complete"); resp.StatusCode != http.StatusBadGateway {
			t.Fatalf("the return lost: got %d, want 502", resp.StatusCode)
		}
		if in, _ := s.Intent(t.Context(), lostID); in.Status != payment.StatusSucceeded {
			t.Fatalf("the return lost: got %s, want the intent succeeded all the same", in.Status)
		}

		// A return_url that is not an absolute http(s) URL is refused.
		if status, body := confirm("k5", "/checkout/return"); status != http.StatusBadRequest || !strings.Contains(mustString(body), "url_invalid") {
			t.Fatalf("a relative return_url: got %d %v, want 400 url_invalid", status, body)
		}

		want := map[string]bool{
			"payment_intent.succeeded " + id: true, "payment_intent.payment_failed " + failedID: true,
			"payment_intent.succeeded " + lostID: true,
		}
		deadline := time.Now().Add(5 * time.Second)
		for {
			mu.Lock()
			got := map[string]int{}
			for _, e := range events {
				got[e]++
			}
			mu.Unlock()
			done := true
			for e := range want {
				done = done && got[e] == 1
			}
			if done && got["payment_intent.succeeded "+id] == 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("webhooks: got %v, want one each of %v", got, want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

func mustString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
