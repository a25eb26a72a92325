package lab

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// The lab sets the fake Stripe's faults and reads its intents through the
// fake's control API (fakestripe's RegisterDemo), over HTTP as the charges
// go: the shop's binary links no provider. These types are that API's wire
// format, the part of it the lab uses.

// Fault is the fault the fake injects into the charging calls: none,
// before_charge, after_charge, decline, timeout, requires_action or
// processing (the fake's Fault names).
type Fault string

// The faults the lab's panel offers.
const (
	FaultNone         Fault = "none"
	FaultBeforeCharge Fault = "before_charge"
	FaultAfterCharge  Fault = "after_charge"
	FaultDecline      Fault = "decline"
	FaultTimeout      Fault = "timeout"
)

// Faults lists the faults the lab's panel accepts.
var Faults = []Fault{FaultNone, FaultBeforeCharge, FaultAfterCharge, FaultDecline, FaultTimeout}

// MaxDelay is the longest delay the fake accepts.
const MaxDelay = 60 * time.Second

// Behaviour is how the fake treats the charging calls until it is changed;
// the zero value is a healthy provider.
type Behaviour struct {
	Delay time.Duration
	Fail  Fault
	// BeforeAnswer makes a charging call deliver its webhook before it
	// answers: the shop hears of the charge from the webhook first.
	BeforeAnswer bool
	// LoseWebhooks makes the fake deliver no webhook at all: in the 3-D
	// Secure scenarios that show the shopper's return settling the order,
	// the webhook would otherwise race it.
	LoseWebhooks bool
	// BankDelay is how long the bank's 3-D Secure page takes to decide a
	// Complete or Fail: a slow bank, during which the shopper clicks again.
	BankDelay time.Duration
}

// behaviourJSON is Behaviour as the control API reads and writes it.
type behaviourJSON struct {
	DelayMS        int64               `json:"delay_ms"`
	Fail           Fault               `json:"fail"`
	Webhooks       *webhooksJSON       `json:"webhooks,omitempty"`
	Authentication *authenticationJSON `json:"authentication,omitempty"`
}

type webhooksJSON struct {
	BeforeAnswer bool `json:"before_answer,omitzero"`
	// Lose is the share of events never delivered, 0 to 1.
	Lose float64 `json:"lose,omitzero"`
}

type authenticationJSON struct {
	DelayMS int64 `json:"delay_ms,omitzero"`
}

// MarshalJSON writes {"delay_ms": …, "fail": …, "webhooks": {…},
// "authentication": {…}}.
func (b Behaviour) MarshalJSON() ([]byte, error) {
	w := behaviourJSON{DelayMS: b.Delay.Milliseconds(), Fail: b.Fail}
	if w.Fail == "" {
		w.Fail = FaultNone
	}
	if b.BeforeAnswer || b.LoseWebhooks {
		w.Webhooks = &webhooksJSON{BeforeAnswer: b.BeforeAnswer}
		if b.LoseWebhooks {
			w.Webhooks.Lose = 1
		}
	}
	if b.BankDelay > 0 {
		w.Authentication = &authenticationJSON{DelayMS: b.BankDelay.Milliseconds()}
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads what MarshalJSON writes, and ignores what the fake
// adds that the lab does not show (rates, webhook shares).
func (b *Behaviour) UnmarshalJSON(data []byte) error {
	var w behaviourJSON
	if err := json.Unmarshal(data, &w); err != nil {
		return fmt.Errorf("behaviour: %w", err)
	}
	*b = Behaviour{Delay: time.Duration(w.DelayMS) * time.Millisecond, Fail: w.Fail}
	if b.Fail == FaultNone {
		b.Fail = ""
	}
	if w.Webhooks != nil {
		b.BeforeAnswer = w.Webhooks.BeforeAnswer
		b.LoseWebhooks = w.Webhooks.Lose >= 1
	}
	if w.Authentication != nil {
		b.BankDelay = time.Duration(w.Authentication.DelayMS) * time.Millisecond
	}
	return nil
}

// Intent is a PaymentIntent as the control API lists it: the fields the
// lab reads.
type Intent struct {
	ID     string
	Status string
}

// Provider is the fake Stripe's control as the lab uses it.
type Provider interface {
	Behaviour() Behaviour
	SetBehaviour(Behaviour) error
	IntentsByMetadata(ctx context.Context, match map[string]string) ([]Intent, error)
	Succeeded(ctx context.Context) (int64, error)
}

// Control is Provider over HTTP: the fake's control API at Base (the
// shop's STRIPE_API_BASE), with its secret key.
type Control struct {
	Base, Secret string
}

// controlTimeout bounds one call: a fake that does not answer in it is
// down, and the lab says so.
const controlTimeout = 10 * time.Second

// Behaviour returns the fake's behaviour, or a healthy one when it cannot
// be read: for the panel that shows it.
func (c Control) Behaviour() Behaviour {
	var b Behaviour
	if err := c.call(context.Background(), http.MethodGet, "/behaviour", nil, &b); err != nil {
		return Behaviour{}
	}
	return b
}

// SetBehaviour sets the fake's faults for the following charging calls.
func (c Control) SetBehaviour(b Behaviour) error {
	body, err := json.Marshal(b)
	if err != nil {
		return fmt.Errorf("set the provider's behaviour: %w", err)
	}
	return c.call(context.Background(), http.MethodPut, "/behaviour", body, nil)
}

// IntentsByMetadata returns the intents whose metadata holds every pair of
// match, oldest first: the shop writes its customer's and operation's ids
// on every intent, which is how the lab finds them, as Stripe's search
// would.
func (c Control) IntentsByMetadata(ctx context.Context, match map[string]string) ([]Intent, error) {
	q := url.Values{}
	for k, v := range match {
		q.Set("metadata["+k+"]", v)
	}
	var out struct {
		Data []Intent `json:"data"`
	}
	if err := c.call(ctx, http.MethodGet, "/intents?"+q.Encode(), nil, &out); err != nil {
		return nil, err
	}
	return out.Data, nil
}

// Succeeded returns how many intents succeeded at the fake.
func (c Control) Succeeded(ctx context.Context) (int64, error) {
	var out struct {
		Succeeded int64 `json:"succeeded"`
	}
	if err := c.call(ctx, http.MethodGet, "/succeeded", nil, &out); err != nil {
		return 0, err
	}
	return out.Succeeded, nil
}

// controlPrefix is where the fake serves its control API.
const controlPrefix = "/provider/demo"

func (c Control) call(ctx context.Context, method, path string, body []byte, out any) error {
	ctx, cancel := context.WithTimeout(ctx, controlTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, c.Base+controlPrefix+path, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("the provider's control: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+c.Secret)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("the provider's control: %w", err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("the provider's control: %w", err)
	}
	if resp.StatusCode == http.StatusBadRequest {
		// Stripe's error object: {"error": {"message": …}}.
		var refused struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(got, &refused) == nil && refused.Error.Message != "" {
			return &refusedError{message: refused.Error.Message}
		}
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the provider's control: %s %s: %d %s", method, path, resp.StatusCode, bytes.TrimSpace(got))
	}
	if out != nil {
		if err := json.Unmarshal(got, out); err != nil {
			return fmt.Errorf("the provider's control: %w", err)
		}
	}
	return nil
}

// String is the fault's name, "none" for the zero value.
func (f Fault) String() string {
	if f == "" {
		return string(FaultNone)
	}
	return string(f)
}
