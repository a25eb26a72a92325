package lab

import (
	"bytes"
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/google/uuid"

	"exactlyonce/client"
)

// Scenario is one experiment of the lab.
type Scenario struct {
	// ID names the scenario in URLs.
	ID    string
	Title string
	// Point is what the scenario shows, in one line: the card's headline.
	Point string
	// Setup is the scenario's conditions in a few words; the provider's
	// delay, which depends on the server (see Limits), is not in it.
	Setup string
	// Explanation says what happens and why, in one paragraph, for those
	// who unfold it.
	Explanation string
	// WantCharges and WantOrders are what a correct server ends with.
	WantCharges, WantOrders int64

	// provider is the fake provider's behaviour for the run; steps may
	// change it.
	provider Behaviour
	// browser: the run's shopper is a browser on the shop's pages (a
	// session cookie, a cart), not an API customer; the 3-D Secure
	// scenarios' way to the bank and back is the pages'.
	browser bool
	// minDelay is the shortest provider delay the scenario can be told
	// with (see Limits.plan); zero: any.
	minDelay time.Duration
	// shoppers is how many API shoppers the run registers (session.
	// shoppers); zero means one.
	shoppers int
	// laneNoun is what one lane of the run stands for (Run.LaneNoun).
	laneNoun string
	// prepare, when set, readies the shop for the run before its shoppers
	// are made and its time line starts: what it waits for is not part of
	// the story.
	prepare func(ctx context.Context, r *Runner) error
	steps   func(ctx context.Context, s *session) error
}

// The request bodies: one espresso mug, and the same order tampered with.
const (
	oneMug  = `{"items": [{"sku": "mug-espresso", "quantity": 1}]}`
	twoMugs = `{"items": [{"sku": "mug-espresso", "quantity": 2}]}`
)

// clientMug is oneMug for the Go client, which writes the body itself.
var clientMug = client.OrderRequest{Items: []client.Item{{SKU: "mug-espresso", Quantity: 1}}}

// shortLock is the lock of the scenario that waits for one to expire, for
// its own requests only.
const shortLock = time.Second

// Scenarios are the lab's experiments, in the order the page shows them.
var Scenarios = []Scenario{
	{
		ID: "double-click", Title: "Double-click",
		Point: "The second click is told to wait (409), then lands on the first click's receipt: one charge.",
		Setup: "Two submits of one form, 50 ms apart",
		Explanation: "The form carries one Idempotency-Key, made when the page was rendered, so both submits send the same key. " +
			"The first claims the key and goes to the provider. The second arrives while the key is locked and is answered 409 " +
			"with Retry-After: the key is in use. It waits until the key has an answer and asks again, and is answered with the " +
			"first click's order, replayed: its receipt. The checkout page (POST /checkout) does that wait on the server, so the " +
			"shopper only sees the receipt; an API client is told 409 and asks again itself, as the second click's lane shows. " +
			"Nothing is charged twice: the key, not the button, makes the second click harmless.",
		WantCharges: 1, WantOrders: 1,
		provider: Behaviour{Delay: 300 * time.Millisecond},
		// The second click, 50 ms after the first, must find it in flight.
		minDelay: 100 * time.Millisecond,
		laneNoun: "click",
		steps: func(ctx context.Context, s *session) error {
			key := uuid.NewString()
			var wg sync.WaitGroup
			wg.Go(func() { s.placeIn(ctx, LaneClick1, "submit", key, oneMug) })
			if err := sleep(ctx, 50*time.Millisecond); err != nil {
				return err
			}
			wg.Go(func() { s.placeUntilAnswered(ctx, LaneClick2, key, oneMug) })
			wg.Wait()
			return nil
		},
	},
	{
		ID: "ten-at-once", Title: "Ten at once",
		Point: "Ten requests with one key: the database lets exactly one claim it, so one charge.",
		Setup: "Ten concurrent submits, one key",
		Explanation: "Ten requests with the same key are let go at the same instant. The database decides: exactly one INSERT of " +
			"the key wins, and that request alone calls the provider. The other nine find the key locked and get 409, or, " +
			"if they arrive after it finished, the stored answer replayed. Ten submissions, one charge.",
		WantCharges: 1, WantOrders: 1,
		provider: Behaviour{Delay: 300 * time.Millisecond},
		steps: func(ctx context.Context, s *session) error {
			key := uuid.NewString()
			s.concurrently(ctx, 10, func() (string, string) { return "submit", key })
			return nil
		},
	},
	{
		ID: "baseline", Title: "Baseline: a fresh key every time",
		Point: "A new key for every request is no key at all: ten submits, ten charges.",
		Setup: "The same ten submits, each with a new key",
		Explanation: "This is a client that makes a new key for every request, which is no better than sending none. Each " +
			"request looks like a new operation, so each claims its own key, calls the provider with its own derived key, " +
			"and writes its own order. Ten submissions, ten charges: the protection lives in reusing the key, not in the server alone.",
		WantCharges: 10, WantOrders: 10,
		provider: Behaviour{Delay: 300 * time.Millisecond},
		steps: func(ctx context.Context, s *session) error {
			s.concurrently(ctx, 10, func() (string, string) { return "submit, new key", uuid.NewString() })
			return nil
		},
	},
	{
		ID: "tampered", Title: "Tampered resubmit",
		Point: "The same key with a changed body is refused (422): a key names one operation.",
		Setup: "An order for one mug, then the same key for two",
		Explanation: "The server stores a fingerprint of the request with the key. The resubmit changes the quantity, so " +
			"its fingerprint differs and the server refuses it with 422 rather than replay the first answer (which would " +
			"hide the change) or charge again (which would make the key mean two operations). A key names one operation.",
		WantCharges: 1, WantOrders: 1,
		steps: func(ctx context.Context, s *session) error {
			key := uuid.NewString()
			s.place(ctx, "original", key, oneMug, 0)
			s.place(ctx, "quantity 2", key, twoMugs, 0)
			return nil
		},
	},
	{
		ID: "crash-after-charge", Title: "Crash after charge",
		Point: "The provider's answer is lost; the retry takes the key over and gets the same charge back.",
		Setup: "The provider charges, then its response is lost · the server's own lock",
		Explanation: "The provider takes the money and the response never arrives. The server asks again twice, with the " +
			"same derived key, and loses those answers too, so it answers 502: the outcome is unknown. It does not make the " +
			"client wait out its lock: it hands the key back (its lease ends now, the key stays started), and says Retry-After: 2. " +
			"The retry takes the key over and asks the provider again with the same derived key; the provider answers with the " +
			"charge it already made, and the order is written against it. Four provider calls, one charge.",
		WantCharges: 1, WantOrders: 1,
		provider: Behaviour{Fail: FaultAfterCharge},
		steps: func(ctx context.Context, s *session) error {
			key := uuid.NewString()
			s.place(ctx, "original", key, oneMug, 0)
			if err := s.markCharged(ctx, key); err != nil {
				return err
			}
			if err := s.setProvider(Behaviour{}); err != nil {
				return err
			}
			recovered := s.place(ctx, "retry", key, oneMug, 0)
			if recovered.status == http.StatusCreated {
				s.fact("recovered by", "the retry")
			}
			return s.noteOriginalCharge(ctx, key, recovered)
		},
	},
	{
		ID: "webhook-first", Title: "Webhook before the answer",
		Point: "Stripe's webhook for the charge arrives before the shop's own call returns; the order is still written once.",
		Setup: "The provider delivers payment_intent.succeeded, then answers the confirm",
		Explanation: "Stripe sends its events on its own schedule: the webhook saying a PaymentIntent succeeded can reach the shop " +
			"while the call that confirmed it is still on its way back. Here the provider delivers it first, and waits for the shop " +
			"to take it. The webhook handler checks the signature, then looks the intent up by its id: no order holds it yet, " +
			"and its key is still started, held by the attempt waiting for this very answer. So the handler writes no order and " +
			"refunds nothing; it records the event in its inbox as pending, in one transaction with its id, and answers 200. Then the " +
			"confirm's answer arrives and the attempt writes the order, fenced by its lock token. One charge, one order, the event " +
			"handled once.",
		WantCharges: 1, WantOrders: 1,
		provider: Behaviour{BeforeAnswer: true},
		steps:    webhookFirstSteps,
	},
	{
		ID: "slow-original", Title: "Slow original, retry after lock expiry",
		Point: "A stalled original loses its lock to a retry; when it wakes, its write is refused.",
		Setup: "1 s lock · the original stalls and stops renewing it",
		Explanation: "An attempt renews its lock while it waits for the provider, so normally a retry cannot take over a live " +
			"request. Here the original's process stalls (a long GC pause, a frozen VM) and its lock expires. A retry takes " +
			"the key over with a new lock token, and the provider's idempotency gives it the same charge. When the original " +
			"wakes, its token no longer matches: it writes nothing and is answered 409 superseded. Its client retries as told " +
			"and receives the retry's order. Without the token check (the status guard kept) there would still be one order, " +
			"but the stale original would win and the retry be told it lost; only a finish with no guard at all writes a second order.",
		WantCharges: 1, WantOrders: 1,
		provider: Behaviour{Delay: 2 * time.Second},
		steps: func(ctx context.Context, s *session) error {
			key := uuid.NewString()
			release := s.stall(key)
			defer release()
			var wg sync.WaitGroup
			wg.Go(func() { s.place(ctx, "original", key, oneMug, shortLock) })
			err := s.waitLockExpired(ctx, key)
			if err == nil {
				s.rec.markNow("lock expired")
				s.place(ctx, "retry after expiry", key, oneMug, shortLock)
			}
			release() // the original wakes up
			s.rec.markNow("original wakes")
			wg.Wait()
			if err != nil {
				return err
			}
			s.place(ctx, "original retried", key, oneMug, shortLock)
			return nil
		},
	},
	{
		ID: "two-tabs", Title: "Two tabs",
		Point: "The key belongs to the cart version, so the second tab gets the first tab's receipt.",
		Setup: "One cart, its checkout open in two tabs, paid in both",
		Explanation: "A shopper opens the checkout twice (two tabs, or a checkout left open and reopened later) and pays in " +
			"both. Both pages show the same cart version, and the key is the version's: minted when the version is first " +
			"shown and kept with the cart, so both tabs send one key. The first tab's order closes the cart; the second gets " +
			"the stored answer replayed, the first tab's receipt. Here the tabs are API clients ordering the cart version " +
			"they show (POST /api/carts/{id}/order with If-Match), which derives the key from the cart and its version.",
		WantCharges: 1, WantOrders: 1,
		provider: Behaviour{Delay: 300 * time.Millisecond},
		steps: func(ctx context.Context, s *session) error {
			cart := uuid.New()
			version, err := s.r.api.putCart(ctx, s.shopper, cart, oneMug)
			if err != nil {
				return err
			}
			first := s.orderCart(ctx, "tab 1", cart, version)
			second := s.orderCart(ctx, "tab 2", cart, version)
			if first.status == http.StatusCreated && second.replayed && bytes.Equal(first.body, second.body) {
				s.note("the second tab was answered with the first tab's order")
			}
			return nil
		},
	},
	{
		ID: "key-per-render", Title: "Baseline: a key per render",
		Point: "A key per page render makes the same cart two orders.",
		Setup: "The same two tabs, each page with a key of its own",
		Explanation: "This is the checkout as it would be if every render of the page minted its own key, and the order " +
			"named no cart version (POST /api/orders with each tab's key). Each tab's key is new to the server, so each " +
			"is a new operation: two charges and two orders for one cart. The key must belong to what is being bought, " +
			"not to the page that shows it.",
		WantCharges: 2, WantOrders: 2,
		provider: Behaviour{Delay: 300 * time.Millisecond},
		steps: func(ctx context.Context, s *session) error {
			// The Go client keeps a key per operation; naming the
			// operation after the render gives each tab its own.
			for _, tab := range []string{"tab 1", "tab 2"} {
				if _, err := s.placeAsClient(ctx, tab+", its own key", "render of "+tab, clientMug); err != nil {
					return err
				}
			}
			return nil
		},
	},
	{
		ID: "refresh", Title: "Refresh after success",
		Point: "A finished key answers with its stored response, byte for byte, and charges nothing.",
		Setup: "An order, then the same request again",
		Explanation: "Refreshing the confirmation page, or a client retrying after a lost response, resends the request. " +
			"The key is finished, so the server answers with the stored response, byte for byte, marked Idempotent-Replayed: " +
			"true, and neither calls the provider nor writes anything.",
		WantCharges: 1, WantOrders: 1,
		steps: func(ctx context.Context, s *session) error {
			// The Go client resends as a client after a lost response
			// does: the same operation, so the same key.
			first, err := s.placeAsClient(ctx, "original", "checkout", clientMug)
			if err != nil {
				return err
			}
			again, err := s.placeAsClient(ctx, "refresh", "checkout", clientMug)
			if err != nil {
				return err
			}
			if first.status == http.StatusCreated && again.replayed && bytes.Equal(first.body, again.body) {
				s.note("the replay is byte-for-byte the original response, marked Idempotent-Replayed: true")
			}
			return nil
		},
	},
	{
		ID: "bank-double-click", Title: "3-D Secure: double-click on the bank's page",
		Point: "The bank's Complete clicked twice: the bank decides once, the shop settles once, one charge.",
		Setup: "A card that asks for 3-D Secure · a slow bank · Complete clicked twice, 50 ms apart",
		Explanation: "The shopper pays in the browser with a card whose bank asks for 3-D Secure. The shop creates and confirms " +
			"the PaymentIntent; Stripe answers requires_action, so the shop records that the order waits for the shopper, " +
			"hands its key back and sends the browser to the bank's page. The bank is slow and the shopper clicks Complete " +
			"again. The intent is Stripe's, and Stripe decides it once: the first click charges it, the second finds it " +
			"decided and only sends the shopper back, to the same return URL. Back at the shop, /checkout/return settles the " +
			"key by the intent as Stripe has it, under a lock of its own and fenced like every finish: succeeded, so the order " +
			"is written, and the browser lands on its receipt. (The webhook is lost here, so that the return is what settles " +
			"it; the webhook-first case is below.) Two clicks, one charge, one order.",
		WantCharges: 1, WantOrders: 1,
		provider: Behaviour{BankDelay: 300 * time.Millisecond, LoseWebhooks: true},
		browser:  true,
		steps:    bankDoubleClickSteps,
	},
	{
		ID: "return-refresh", Title: "3-D Secure: refresh of the return page",
		Point: "The way back from the bank, refreshed and opened in another tab: one order, shown three times.",
		Setup: "A card that asks for 3-D Secure · back from the bank, then a refresh and a second tab at once",
		Explanation: "The bank sends the shopper back to /checkout/return, which names the order's key. The first visit settles " +
			"the key: it takes it under a lock of its own, asks Stripe how the intent stands (succeeded), writes the order " +
			"and finishes the key with its answer. A refresh of that page, or the same URL opened in another tab, finds the key " +
			"finished and shows its stored answer, the same receipt: nothing asks Stripe again, nothing is written again. Had " +
			"two visits come at once, one would hold the key and the other would wait on the processing page until it was " +
			"done. (The webhook is lost here, so that the return is what settles the order.) Three visits, one order.",
		WantCharges: 1, WantOrders: 1,
		provider: Behaviour{LoseWebhooks: true},
		browser:  true,
		steps:    returnRefreshSteps,
	},
	{
		ID: "webhook-before-return", Title: "3-D Secure: webhook before the return",
		Point: "Stripe's webhook settles the order before the shopper is back; the return then finds it done.",
		Setup: "A card that asks for 3-D Secure · the shopper's way back held until the webhook has come",
		Explanation: "The shopper completes the authentication, but their way back to the shop is slow (a phone on a train; " +
			"here the lab holds the redirect). Stripe meanwhile sends payment_intent.succeeded. The webhook handler records the " +
			"event, finds the key waiting for its shopper by the intent's id, and settles it exactly as the return would: under " +
			"the key's lock, by the intent as Stripe has it, so the order is written. When the shopper arrives, the return finds " +
			"the key finished and shows the stored receipt; it settles nothing. Had the shopper never come back at all, the order " +
			"would be there all the same. One charge, one order, whichever arrives first.",
		WantCharges: 1, WantOrders: 1,
		browser: true,
		steps:   webhookBeforeReturnSteps,
	},
	{
		ID: "abandon-pay-again", Title: "3-D Secure: abandon and pay again",
		Point: "A payment left at the bank is canceled past the window; paying again charges once, the first never.",
		Setup: "A card that asks for 3-D Secure, the bank's page left · past AUTHENTICATION_WINDOW, the form again, then another card",
		Explanation: "The shopper is sent to their bank and leaves without deciding. The shop waits for them for " +
			"AUTHENTICATION_WINDOW (15 minutes by default); the lab does not wait that long, it moves the start of the wait " +
			"back by the window in the database, whose clock judges it. The shopper then sends the checkout form again, with " +
			"its key: the retry takes the key over, finds the intent still waiting past the window and cancels it at Stripe " +
			"(the completer would have done the same), so the answer is payment not completed, and nothing was charged. A " +
			"Complete clicked afterwards on the bank's old tab changes nothing: a canceled intent can never be charged. The cart " +
			"is kept, and the new checkout has a new key; paid with another card, it is one charge and one order, and the first " +
			"payment stays canceled.",
		WantCharges: 1, WantOrders: 1,
		browser: true,
		steps:   abandonSteps,
	},
	{
		ID: "worker-crash", Title: "Worker crash after effect",
		Point: "A job that dies after its effect runs again, and its ledger row is written once.",
		Setup: "An order · its loyalty job dies after the ledger insert, before completion",
		Explanation: "The order's statement also enqueued its loyalty job (the outbox). The job's worker inserts the order's ledger row, " +
			"then dies before River marks the job completed. The insert and the completion are one transaction, so the crash rolls " +
			"both back; River delivers the job again (attempt 2), and the row keyed by the order is written once. Had the row " +
			"survived, the second run's INSERT … ON CONFLICT DO NOTHING would have added nothing. The balance is a sum over the ledger.",
		WantCharges: 1, WantOrders: 1,
		steps: workerCrashSteps,
	},
	{
		ID: "last-mug", Title: "Two shoppers, one mug left",
		Point: "Two shoppers order the last mug at once: one order; the other is told \"sold out\" before any charge.",
		Setup: "One mug on hand · two shoppers order it at the same instant, each with a key of their own",
		Explanation: "Stock is reserved by the claim: the statement that claims an order's key also takes its items off what is on " +
			"hand, under the product's row lock. Two claims of the last mug take turns on that lock. The first finds one and " +
			"reserves it; the second finds none left, a CHECK fails its statement as a whole, and so nothing of it is written: " +
			"no key, no reservation, no PaymentIntent. That shopper is told 409 sold out at once, while the first is still being " +
			"charged; the first's order turns the reservation into a sale. The mug is the lab's own (\"the lab's last one\"), not " +
			"the shop's espresso mug: stock is global in the shop's database, which the lab shares with real shoppers, and making " +
			"their mugs scarce for a run would refuse them, while giving stock back afterwards would undo a sale that happened. " +
			"The catalog lists the lab's mug, sold out between runs; each run receives one, as a delivery does (on hand and " +
			"received go up together, so on hand + reserved + sold = received still holds).",
		WantCharges: 1, WantOrders: 1,
		// The winner's charge is slow, so the refusal visibly comes first.
		provider: Behaviour{Delay: 300 * time.Millisecond},
		shoppers: 2,
		laneNoun: "shopper",
		prepare:  oneLabMugLeft,
		steps:    lastMugSteps,
	},
}

// ScenarioByID returns the scenario named id.
func ScenarioByID(id string) (Scenario, bool) {
	for _, sc := range Scenarios {
		if sc.ID == id {
			return sc, true
		}
	}
	return Scenario{}, false
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
