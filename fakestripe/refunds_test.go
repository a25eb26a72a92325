package fakestripe_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v85"

	"exactlyonce/fakestripe"
)

// refund posts a refund of the intent id with the key and the extra
// parameters.
func (f *fake) refund(t *testing.T, key, id string, params ...string) response {
	t.Helper()
	form := url.Values{"payment_intent": {id}}
	for i := 0; i+1 < len(params); i += 2 {
		form.Set(params[i], params[i+1])
	}
	return f.call(t, http.MethodPost, "/v1/refunds", key, form)
}

// wantRefund fails the test unless r is a refund of amount.
func wantRefund(t *testing.T, what string, r response, amount int) {
	t.Helper()
	if r.status != http.StatusOK || r.body["object"] != "refund" || r.body["amount"] != float64(amount) ||
		r.body["status"] != "succeeded" {
		t.Fatalf("%s: got %d %s, want a refund of %d", what, r.status, r.raw, amount)
	}
}

// wantRefunded fails the test unless the intent id has amount refunded,
// in full or not.
func (f *fake) wantRefunded(t *testing.T, id string, amount int64, full bool) {
	t.Helper()
	if in := f.intent(t, id); in.AmountRefunded != amount || in.Refunded != full {
		t.Fatalf("intent: got %d refunded (in full: %v), want %d (%v)", in.AmountRefunded, in.Refunded, amount, full)
	}
}

// Partial refunds up to the amount, each its own object with its reason
// and metadata; then the intent is refunded in full and one more is
// refused as charge_already_refunded.
func TestPartialRefunds(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, start func(...fakestripe.Option) *fake) {
		f := start()
		in := f.charged(t, "1000")
		first := f.refund(t, "r1", in.ID, "amount", "300", "reason", "requested_by_customer", "metadata[order]", "o-1")
		wantRefund(t, "first", first, 300)
		if first.body["reason"] != "requested_by_customer" || first.body["payment_intent"] != in.ID ||
			first.body["charge"] != *in.LatestCharge || first.body["currency"] != "eur" {
			t.Errorf("first: got %s", first.raw)
		}
		if md, _ := first.body["metadata"].(map[string]any); md["order"] != "o-1" || len(md) != 1 {
			t.Errorf("first: metadata %v, want {order: o-1}", first.body["metadata"])
		}
		f.wantRefunded(t, in.ID, 300, false)

		second := f.refund(t, "r2", in.ID, "amount", "650")
		wantRefund(t, "second", second, 650)
		if second.body["id"] == first.body["id"] || second.body["reason"] != nil {
			t.Errorf("second: got %s, want a refund of its own with no reason", second.raw)
		}
		f.wantRefunded(t, in.ID, 950, false)

		// No amount: what is left.
		rest := f.refund(t, "r3", in.ID)
		wantRefund(t, "the rest", rest, 50)
		f.wantRefunded(t, in.ID, 1000, true)

		again := f.refund(t, "r4", in.ID, "amount", "1")
		if again.status != http.StatusBadRequest || again.errorField("code") != "charge_already_refunded" ||
			again.errorField("charge") != *in.LatestCharge {
			t.Errorf("one more: got %d %s, want 400 charge_already_refunded", again.status, again.raw)
		}
		refunds, err := f.Refunds(context.Background(), in.ID)
		if err != nil || len(refunds) != 3 {
			t.Fatalf("refunds: got %d, %v, want 3", len(refunds), err)
		}
	})
}

// A refund past what is left is refused as Stripe refuses it (400
// invalid_request_error on amount, with no code, the amounts in the
// message) and stored under its key: the retry is answered the same,
// replayed, and what is left can still be refunded.
func TestRefundPastWhatIsLeft(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, start func(...fakestripe.Option) *fake) {
		f := start()
		in := f.charged(t, "1000")
		wantRefund(t, "first", f.refund(t, "r1", in.ID, "amount", "600"), 600)
		over := f.refund(t, "r2", in.ID, "amount", "500")
		if over.status != http.StatusBadRequest || over.errorField("type") != "invalid_request_error" ||
			over.errorField("param") != "amount" || over.errorField("code") != "" ||
			over.errorField("message") != "Refund amount (€5.00) is greater than unrefunded amount on charge (€4.00)" {
			t.Fatalf("over: got %d %s", over.status, over.raw)
		}
		replay := f.refund(t, "r2", in.ID, "amount", "500")
		if replay.status != over.status || replay.raw != over.raw || replay.header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("replay: got %d %s (replayed %q), want the refusal replayed", replay.status, replay.raw,
				replay.header.Get("Idempotent-Replayed"))
		}
		f.wantRefunded(t, in.ID, 600, false)
		wantRefund(t, "what is left", f.refund(t, "r3", in.ID, "amount", "400"), 400)
		f.wantRefunded(t, in.ID, 1000, true)
	})
}

// Parameters Stripe refuses before it acts are refused, and not stored:
// the key is free for the right ones.
func TestRefundParameterErrors(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, start func(...fakestripe.Option) *fake) {
		f := start()
		in := f.charged(t, "1000")
		for _, c := range []struct{ param, value, code string }{
			{"amount", "0", "parameter_invalid_integer"},
			{"amount", "-5", "parameter_invalid_integer"},
			{"amount", "1.5", "parameter_invalid_integer"},
			{"amount", "ten", "parameter_invalid_integer"},
			{"amount", "100000000", "amount_too_large"},
			{"reason", "bored", "parameter_invalid"},
			{"refund_everything", "true", "parameter_unknown"},
		} {
			r := f.refund(t, "k", in.ID, c.param, c.value)
			if r.status != http.StatusBadRequest || r.errorField("code") != c.code || r.errorField("param") != c.param {
				t.Errorf("%s=%s: got %d %s, want 400 %s", c.param, c.value, r.status, r.raw, c.code)
			}
		}
		wantRefund(t, "the key after the refusals", f.refund(t, "k", in.ID, "amount", "100"), 100)
		f.wantRefunded(t, in.ID, 100, false)
	})
}

// The same key with the same parameters replays the refund, refunding
// nothing more; with other parameters it is Stripe's idempotency error.
func TestRefundReplayAndKeyReuse(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, start func(...fakestripe.Option) *fake) {
		f := start()
		in := f.charged(t, "1000")
		first := f.refund(t, "k", in.ID, "amount", "300", "metadata[n]", "1")
		wantRefund(t, "first", first, 300)
		replay := f.refund(t, "k", in.ID, "amount", "300", "metadata[n]", "1")
		if replay.raw != first.raw || replay.header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("replay: got %s (replayed %q), want %s replayed", replay.raw, replay.header.Get("Idempotent-Replayed"), first.raw)
		}
		if first.header.Get("Idempotent-Replayed") != "" {
			t.Error("the first answer says it was replayed")
		}
		other := f.refund(t, "k", in.ID, "amount", "200", "metadata[n]", "1")
		if other.status != http.StatusBadRequest || other.errorField("type") != "idempotency_error" {
			t.Errorf("other parameters: got %d %s, want 400 idempotency_error", other.status, other.raw)
		}
		f.wantRefunded(t, in.ID, 300, false)
	})
}

// Refunds racing on one intent, each a real concurrent HTTP request with
// a key of its own, never refund more than it charged: each is a refund,
// or refused for what is left; none is a 500, and the intent's
// amount_refunded is the sum of the refunds made.
func TestRacingPartialRefunds(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, start func(...fakestripe.Option) *fake) {
		f := start()
		var raced []string
		for round := range 5 {
			in := f.charged(t, "1000")
			raced = append(raced, in.ID)
			// Two of 600: one only. Then eight of 150 on the 400 left: two.
			for _, wave := range []struct{ n, amount, made int }{{2, 600, 1}, {8, 150, 2}} {
				var (
					wg    sync.WaitGroup
					go1   = make(chan struct{})
					mu    sync.Mutex
					made  int
					other []string
				)
				for i := range wave.n {
					wg.Go(func() {
						<-go1
						r, err := f.try(http.MethodPost, "/v1/refunds", fmt.Sprintf("race-%d-%d-%d", round, wave.amount, i),
							url.Values{"payment_intent": {in.ID}, "amount": {fmt.Sprint(wave.amount)}}, 0)
						mu.Lock()
						defer mu.Unlock()
						switch {
						case err != nil:
							other = append(other, err.Error())
						case r.status == http.StatusOK && r.body["amount"] == float64(wave.amount):
							made++
						case r.status == http.StatusBadRequest && r.errorField("param") == "amount":
						default:
							other = append(other, r.raw)
						}
					})
				}
				close(go1)
				wg.Wait()
				if made != wave.made || len(other) > 0 {
					t.Fatalf("round %d, %d of %d: got %d refunds and %v, want %d and only refusals of the amount",
						round, wave.n, wave.amount, made, other, wave.made)
				}
			}
			f.wantRefunded(t, in.ID, 900, false)
			refunds, err := f.Refunds(context.Background(), in.ID)
			if err != nil || len(refunds) != 3 {
				t.Fatalf("round %d: got %d refunds, %v, want 3", round, len(refunds), err)
			}
		}
		// The ledger of refunds, which the chaos harness reads, sums to
		// what the intents say was refunded (the other tests' intents,
		// in the same database, are still being refunded: not these).
		all, err := f.RefundLedger(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		sums := map[string]int64{}
		for _, r := range all {
			sums[r.PaymentIntentID] += r.Amount
		}
		for _, id := range raced {
			if in := f.intent(t, id); sums[id] != 900 || in.AmountRefunded != 900 {
				t.Errorf("ledger: %s has %d refunded, its refunds %d, want 900", id, in.AmountRefunded, sums[id])
			}
		}
	})
}

// Each refund sends charge.refunded, the charge with what all its refunds
// gave back (refunded only once in full), and refund.created, the refund;
// a replay sends none.
func TestRefundEvents(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, start func(...fakestripe.Option) *fake) {
		f := start()
		in := f.charged(t, "1000")
		first := f.refund(t, "r1", in.ID, "amount", "300", "metadata[order]", "o-1")
		f.refund(t, "r1", in.ID, "amount", "300", "metadata[order]", "o-1") // replayed
		second := f.refund(t, "r2", in.ID)
		charges := f.hooks.objects(t, "charge.refunded", 2)
		refunds := f.hooks.objects(t, "refund.created", 2)
		time.Sleep(100 * time.Millisecond) // a third of either, were one sent, would be here by now
		if n, m := len(f.hooks.objects(t, "charge.refunded", 2)), len(f.hooks.objects(t, "refund.created", 2)); n != 2 || m != 2 {
			t.Errorf("got %d charge.refunded and %d refund.created, want 2 each: the replay sends none", n, m)
		}
		seen := map[float64]bool{}
		for _, ch := range charges {
			if ch["id"] != *in.LatestCharge || ch["payment_intent"] != in.ID || ch["amount"] != float64(1000) {
				t.Errorf("charge.refunded: got %v", ch)
			}
			full := ch["amount_refunded"] == float64(1000)
			if ch["refunded"] != full {
				t.Errorf("charge.refunded: amount_refunded %v with refunded %v", ch["amount_refunded"], ch["refunded"])
			}
			seen[ch["amount_refunded"].(float64)] = true
		}
		if !seen[300] || !seen[1000] {
			t.Errorf("charge.refunded: got amount_refunded %v, want 300 and 1000", seen)
		}
		ids := map[any]bool{}
		for _, r := range refunds {
			ids[r["id"]] = true
			if r["object"] != "refund" || r["payment_intent"] != in.ID {
				t.Errorf("refund.created: got %v", r)
			}
		}
		if !ids[first.body["id"]] || !ids[second.body["id"]] {
			t.Errorf("refund.created: got %v, want %v and %v", ids, first.body["id"], second.body["id"])
		}
	})
}

// A refund is read by id, and an intent's refunds listed newest first, in
// pages, by the intent or by its charge.
func TestRefundLookups(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, start func(...fakestripe.Option) *fake) {
		f := start()
		in := f.charged(t, "1000")
		f.charged(t, "500") // another intent, refunded too, never listed with in's
		first := f.refund(t, "r1", in.ID, "amount", "100", "reason", "duplicate")
		second := f.refund(t, "r2", in.ID, "amount", "200")
		wantRefund(t, "first", first, 100)
		wantRefund(t, "second", second, 200)
		got := f.call(t, http.MethodGet, "/v1/refunds/"+first.body["id"].(string), "", nil)
		if got.status != http.StatusOK || got.raw != first.raw {
			t.Errorf("retrieve: got %d %s, want %s", got.status, got.raw, first.raw)
		}
		if r := f.call(t, http.MethodGet, "/v1/refunds/re_unknown", "", nil); r.status != http.StatusNotFound ||
			r.errorField("code") != "resource_missing" {
			t.Errorf("retrieve an unknown id: got %d %s, want 404 resource_missing", r.status, r.raw)
		}
		ids := func(r response) []any {
			var out []any
			data, _ := r.body["data"].([]any)
			for _, d := range data {
				out = append(out, d.(map[string]any)["id"])
			}
			return out
		}
		for _, by := range []url.Values{{"payment_intent": {in.ID}}, {"charge": {*in.LatestCharge}}} {
			all := f.call(t, http.MethodGet, "/v1/refunds", "", by)
			if got := ids(all); all.status != http.StatusOK || fmt.Sprint(got) != fmt.Sprint([]any{second.body["id"], first.body["id"]}) ||
				all.body["has_more"] != false {
				t.Errorf("list by %v: got %d %s", by, all.status, all.raw)
			}
		}
		page := f.call(t, http.MethodGet, "/v1/refunds", "", url.Values{"payment_intent": {in.ID}, "limit": {"1"}})
		next := f.call(t, http.MethodGet, "/v1/refunds", "", url.Values{"payment_intent": {in.ID}, "limit": {"1"},
			"starting_after": {second.body["id"].(string)}})
		if fmt.Sprint(ids(page)) != fmt.Sprint([]any{second.body["id"]}) || page.body["has_more"] != true ||
			fmt.Sprint(ids(next)) != fmt.Sprint([]any{first.body["id"]}) || next.body["has_more"] != false {
			t.Errorf("pages: got %s then %s", page.raw, next.raw)
		}
		back := f.call(t, http.MethodGet, "/v1/refunds", "", url.Values{"payment_intent": {in.ID}, "limit": {"1"},
			"ending_before": {first.body["id"].(string)}})
		if fmt.Sprint(ids(back)) != fmt.Sprint([]any{second.body["id"]}) || back.body["has_more"] != false {
			t.Errorf("the page before the first refund: got %s, want the second alone", back.raw)
		}
		if r := f.call(t, http.MethodGet, "/v1/refunds", "", url.Values{"ending_before": {"re_unknown"}}); r.status != http.StatusNotFound ||
			r.errorField("code") != "resource_missing" || r.errorField("param") != "ending_before" {
			t.Errorf("a cursor of no refund: got %d %s, want 404 resource_missing on ending_before", r.status, r.raw)
		}
	})
}

// The refund faults, opt-in: a lost answer (after_charge) leaves the
// refund made and its key answering it; before_charge makes none; a
// timeout makes it after the client gave up. The charging calls meet
// none of them.
func TestRefundFaults(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, start func(...fakestripe.Option) *fake) {
		f := start()
		in := f.charged(t, "1000")
		set := func(r fakestripe.RefundFaults) {
			if err := f.SetBehaviour(fakestripe.Behaviour{Refunds: r}); err != nil {
				t.Fatal(err)
			}
		}

		set(fakestripe.RefundFaults{Fail: fakestripe.FaultAfterCharge, Times: 1})
		f.charged(t, "100") // a charge meets no refund fault, nor uses it up
		if r := f.refund(t, "lost", in.ID, "amount", "100"); r.status != http.StatusInternalServerError {
			t.Fatalf("after_charge: got %d %s, want 500", r.status, r.raw)
		}
		f.wantRefunded(t, in.ID, 100, false)
		retry := f.refund(t, "lost", in.ID, "amount", "100")
		wantRefund(t, "the retry of the lost answer", retry, 100)
		if retry.header.Get("Idempotent-Replayed") != "true" {
			t.Error("the retry of the lost answer was not replayed")
		}
		f.wantRefunded(t, in.ID, 100, false)

		set(fakestripe.RefundFaults{Fail: fakestripe.FaultBeforeCharge, Times: 1})
		if r := f.refund(t, "failed", in.ID, "amount", "100"); r.status != http.StatusInternalServerError {
			t.Fatalf("before_charge: got %d %s, want 500", r.status, r.raw)
		}
		f.wantRefunded(t, in.ID, 100, false)
		retry = f.refund(t, "failed", in.ID, "amount", "100")
		wantRefund(t, "the retry of the failed refund", retry, 100)
		if retry.header.Get("Idempotent-Replayed") != "" {
			t.Error("the retry of a refund never made was replayed")
		}
		f.wantRefunded(t, in.ID, 200, false)

		set(fakestripe.RefundFaults{Fail: fakestripe.FaultTimeout})
		if _, err := f.try(http.MethodPost, "/v1/refunds", "hung", url.Values{"payment_intent": {in.ID}, "amount": {"100"}},
			200*time.Millisecond); err == nil {
			t.Fatal("timeout: got an answer, want the client to give up")
		}
		for deadline := time.Now().Add(5 * time.Second); f.intent(t, in.ID).AmountRefunded != 300; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("timeout: the refund was never made after the client gave up")
			}
		}
		set(fakestripe.RefundFaults{})
		wantRefund(t, "the retry after the timeout", f.refund(t, "hung", in.ID, "amount", "100"), 100)
		f.wantRefunded(t, in.ID, 300, false)
	})
}

// The refund faults in the behaviour's JSON, as the demo API takes them:
// absent when none, and only the faults a refund can meet.
func TestRefundFaultsJSON(t *testing.T) {
	var b fakestripe.Behaviour
	body := `{"delay_ms":0,"fail":"none","refunds":{"fail":"after_charge","times":2,"rates":{"timeout":0.1}}}`
	if err := json.Unmarshal([]byte(body), &b); err != nil {
		t.Fatal(err)
	}
	want := fakestripe.RefundFaults{Fail: fakestripe.FaultAfterCharge, Times: 2, Rates: fakestripe.Rates{Timeout: 0.1}}
	if b.Refunds != want {
		t.Errorf("got %+v, want %+v", b.Refunds, want)
	}
	if out, _ := json.Marshal(b); string(out) != body {
		t.Errorf("got %s, want %s", out, body)
	}
	if out, _ := json.Marshal(fakestripe.Behaviour{Refunds: fakestripe.RefundFaults{Fail: fakestripe.FaultNone}}); string(out) != `{"delay_ms":0,"fail":"none"}` {
		t.Errorf("no refund faults: got %s", out)
	}
	for _, body := range []string{
		`{"refunds":{"fail":"decline"}}`,
		`{"refunds":{"fail":"processing"}}`,
		`{"refunds":{"rates":{"requires_action":0.1}}}`,
		`{"refunds":{"rates":{"after_charge":0.6,"timeout":0.6}}}`,
		`{"refunds":{"times":-1}}`,
		`{"refunds":{"delay_ms":10}}`,
	} {
		var b fakestripe.Behaviour
		if err := json.Unmarshal([]byte(body), &b); err == nil {
			t.Errorf("%s: got %+v, want an error", body, b.Refunds)
		}
	}
	p := fakestripe.NewInMemory("sk")
	defer p.Close()
	if err := p.SetBehaviour(fakestripe.Behaviour{Refunds: fakestripe.RefundFaults{Fail: fakestripe.FaultDecline}}); err == nil {
		t.Error("SetBehaviour with a decline of refunds: got no error")
	}
}

// The shop's call, through Stripe's own SDK: a partial refund with its
// key, reason and metadata; its retry, replayed; one past what is left,
// a *stripe.Error the shop can tell by its type and param.
func TestRefundThroughSDK(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, start func(...fakestripe.Option) *fake) {
		f := start()
		in := f.charged(t, "1000")
		backend := stripe.GetBackendWithConfig(stripe.APIBackend, &stripe.BackendConfig{
			URL: stripe.String(f.url), MaxNetworkRetries: stripe.Int64(0), LeveledLogger: &stripe.LeveledLogger{Level: stripe.LevelNull},
		})
		sc := stripe.NewClient(testSecret, stripe.WithBackends(&stripe.Backends{API: backend, Connect: backend, Uploads: backend}))
		create := func(key string, amount int64) (*stripe.Refund, error) {
			p := &stripe.RefundCreateParams{PaymentIntent: stripe.String(in.ID), Amount: stripe.Int64(amount),
				Reason: stripe.String(string(stripe.RefundReasonRequestedByCustomer))}
			p.AddMetadata("order", "o-1")
			p.SetIdempotencyKey(f.keys + key)
			return sc.V1Refunds.Create(context.Background(), p)
		}
		r, err := create("sdk-1", 250)
		if err != nil {
			t.Fatal(err)
		}
		if r.Amount != 250 || r.Status != stripe.RefundStatusSucceeded || r.PaymentIntent == nil || r.PaymentIntent.ID != in.ID ||
			r.Reason != stripe.RefundReasonRequestedByCustomer || r.Metadata["order"] != "o-1" || r.Charge == nil || r.Charge.ID != *in.LatestCharge {
			t.Errorf("refund: got %+v", r)
		}
		again, err := create("sdk-1", 250)
		if err != nil || again.ID != r.ID || again.LastResponse.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("retry: got %+v, %v, want %s replayed", again, err, r.ID)
		}
		_, err = create("sdk-2", 800)
		var se *stripe.Error
		if !errors.As(err, &se) || se.HTTPStatusCode != http.StatusBadRequest || se.Type != stripe.ErrorTypeInvalidRequest ||
			se.Param != "amount" || se.Code != "" {
			t.Errorf("past what is left: got %#v, want a 400 invalid_request_error on amount", err)
		}
		got, err := sc.V1Refunds.Retrieve(context.Background(), r.ID, nil)
		if err != nil || got.Amount != 250 {
			t.Errorf("retrieve: got %+v, %v", got, err)
		}
		var listed []string
		for r, err := range sc.V1Refunds.List(context.Background(), &stripe.RefundListParams{PaymentIntent: stripe.String(in.ID)}).All(context.Background()) {
			if err != nil {
				t.Fatal(err)
			}
			listed = append(listed, r.ID)
		}
		if len(listed) != 1 || listed[0] != r.ID {
			t.Errorf("list: got %v, want [%s]", listed, r.ID)
		}
		f.wantRefunded(t, in.ID, 250, false)
	})
}
