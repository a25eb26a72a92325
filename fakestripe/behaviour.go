package fakestripe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Fault is a failure the provider injects into charging calls. Its
// value is its name, as the demo API spells it. The zero value "" means
// FaultNone.
type Fault string

// The faults, each losing a different part of a call.
const (
	// FaultNone processes calls normally.
	FaultNone Fault = "none"
	// FaultBeforeCharge answers 500 without charging: a clean failure.
	FaultBeforeCharge Fault = "before_charge"
	// FaultAfterCharge charges, then answers 500: the money moved but the
	// response is lost.
	FaultAfterCharge Fault = "after_charge"
	// FaultDecline records a declined charge and answers 402, whatever the card.
	FaultDecline Fault = "decline"
	// FaultTimeout hangs until the client gives up (at most MaxHang), then
	// charges anyway: a timeout does not mean the call failed.
	FaultTimeout Fault = "timeout"
	// FaultRequiresAction answers the confirm 200 with the intent
	// requires_action, whatever the card: the bank asks for 3-D Secure,
	// and nothing is charged.
	FaultRequiresAction Fault = "requires_action"
	// FaultProcessing answers the confirm 200 with the intent processing,
	// whatever the card: it moves on later (Behaviour.ProcessingFor, or
	// MoveOn) to what the card would have done.
	FaultProcessing Fault = "processing"
)

var faults = []Fault{FaultNone, FaultBeforeCharge, FaultAfterCharge, FaultDecline, FaultTimeout,
	FaultRequiresAction, FaultProcessing}

// Limits on injected slowness, so that a forgotten setting cannot hold
// handler goroutines forever.
const (
	// MaxDelay is the longest Behaviour.Delay accepted.
	MaxDelay = 60 * time.Second
	// MaxHang is how long FaultTimeout waits for the client to give up before
	// charging and answering normally.
	MaxHang = 60 * time.Second
	// MaxProcessing is the longest Behaviour.ProcessingFor accepted.
	MaxProcessing = 10 * time.Minute
)

// ParseFault returns the fault named s, one of none, before_charge,
// after_charge, decline, timeout, requires_action or processing.
func ParseFault(s string) (Fault, error) {
	for _, f := range faults {
		if s == string(f) {
			return f, nil
		}
	}
	names := make([]string, len(faults))
	for i, f := range faults {
		names[i] = string(f)
	}
	return FaultNone, fmt.Errorf("unknown fault %q: want one of %s", s, strings.Join(names, ", "))
}

// String returns the fault's name, "none" for the zero value.
func (f Fault) String() string {
	if f == "" {
		return string(FaultNone)
	}
	return string(f)
}

// normal spells the zero value out, so that Behaviour() and JSON always
// name the fault.
func (f Fault) normal() Fault { return Fault(f.String()) }

// UnmarshalText decodes a fault name, rejecting unknown ones.
func (f *Fault) UnmarshalText(text []byte) error {
	parsed, err := ParseFault(string(text))
	if err != nil {
		return err
	}
	*f = parsed
	return nil
}

// Behaviour is how the provider treats the charging calls it receives
// until it is changed. The zero value is a healthy provider. In JSON it reads
// {"delay_ms": 0, "fail": "none"}, the body of the demo API, optionally with
// "rates": {"after_charge": 0.1, "timeout": 0.05, …} and "processing_ms".
type Behaviour struct {
	// Delay is waited before each call is processed, stopping early if the
	// client gives up (in which case nothing is charged).
	Delay time.Duration
	// Fail is the fault injected after the delay into every call, or into
	// the next Times calls when Times is set (a blip), after which the
	// provider is healthy again.
	Fail  Fault
	Times int
	// Rates inject faults into a share of the calls at random, for soak
	// and chaos runs; they apply only while Fail is none.
	Rates Rates
	// Webhooks are the faults of the provider's webhook deliveries.
	Webhooks WebhookFaults
	// Authentication are the faults of the bank's 3-D Secure page.
	Authentication AuthenticationFaults
	// ProcessingFor is how long an intent a confirm left processing stays
	// so before it moves on by itself, when it is next read, confirmed or
	// canceled; zero keeps it processing until MoveOn.
	ProcessingFor time.Duration
	// Refunds are the faults of the refunds (POST /v1/refunds), set apart
	// from the charging calls': a run that injects faults into charges
	// still refunds cleanly until it asks for refund faults too.
	Refunds RefundFaults
}

// RefundFaults lose refunds' answers as the charging calls' faults lose
// theirs: before_charge answers 500 before the refund is made,
// after_charge makes it and answers 500, timeout hangs until the client
// gives up (at most MaxHang) and makes it anyway. A lost answer is stored
// under the key like any other, so the retry with the key is answered the
// refund made (unless it meets a fault too). No other fault applies to a
// refund, and no delay.
type RefundFaults struct {
	// Fail is injected into every refund, or into the next Times when
	// Times is set; "" is none.
	Fail  Fault `json:"fail,omitzero"`
	Times int   `json:"times,omitzero"`
	// Rates are the shares of refunds meeting each fault, while Fail is
	// none: only BeforeCharge, AfterCharge and Timeout.
	Rates Rates `json:"rates,omitzero"`
}

// validate reports whether r can be used.
func (r RefundFaults) validate() error {
	switch r.Fail.normal() {
	case FaultNone, FaultBeforeCharge, FaultAfterCharge, FaultTimeout:
	default:
		return fmt.Errorf("refunds: fail must be none, before_charge, after_charge or timeout, not %s", r.Fail)
	}
	if r.Rates.Decline != 0 || r.Rates.RequiresAction != 0 || r.Rates.Processing != 0 {
		return fmt.Errorf("refunds: only the rates before_charge, after_charge and timeout apply to refunds")
	}
	if r.Times < 0 {
		return fmt.Errorf("refunds: times must be 0 (every refund) or more")
	}
	return r.Rates.validate()
}

// AuthenticationFaults make the bank's 3-D Secure page (authenticate.go)
// behave as a shopper's trip to their bank may: slowly, or without ever
// coming back to the shop.
type AuthenticationFaults struct {
	// Delay is waited before a completion or failure is decided: a slow
	// bank, during which the shopper may click again.
	Delay time.Duration `json:"-"`
	// LoseReturn decides the authentication (and sends its webhook) but
	// answers the shopper 502 instead of sending them back to return_url:
	// the return is lost, and only the webhook tells the shop.
	LoseReturn bool `json:"lose_return,omitzero"`
}

// authenticationFaultsJSON is AuthenticationFaults on the wire, the delay
// in milliseconds.
type authenticationFaultsJSON struct {
	AuthenticationFaults
	DelayMS int64 `json:"delay_ms,omitzero"`
}

// WebhookFaults make webhook deliveries arrive as Stripe's may: twice, out
// of order, late, never, or before the answer to the call that caused them.
type WebhookFaults struct {
	// Duplicate and Reorder are the shares of events (0 to 1) delivered
	// twice, and held back so that later ones overtake them.
	Duplicate float64 `json:"duplicate,omitzero"`
	Reorder   float64 `json:"reorder,omitzero"`
	// Lose is the share of events (0 to 1) never delivered: Stripe retries
	// for days, but a shop must not wait for that to be right.
	Lose float64 `json:"lose,omitzero"`
	// Delay is waited before every delivery.
	Delay time.Duration `json:"-"`
	// BeforeAnswer makes a charging call deliver its event before it
	// answers: the shop hears of the charge from the webhook first.
	BeforeAnswer bool `json:"before_answer,omitzero"`
}

// validate reports whether w can be used.
func (w WebhookFaults) validate() error {
	for _, v := range []float64{w.Duplicate, w.Reorder, w.Lose} {
		if !(v >= 0 && v <= 1) {
			return fmt.Errorf("webhook shares must be between 0 and 1")
		}
	}
	if w.Delay < 0 || w.Delay > MaxDelay {
		return fmt.Errorf("webhook delay must be between 0 and %d ms", MaxDelay.Milliseconds())
	}
	return nil
}

// webhookFaultsJSON is WebhookFaults on the wire, the delay in milliseconds.
type webhookFaultsJSON struct {
	WebhookFaults
	DelayMS int64 `json:"delay_ms,omitzero"`
}

// Rates are the probabilities, each between 0 and 1 and together at most 1,
// that a charging call meets each fault. The rest of the calls are
// processed normally.
type Rates struct {
	BeforeCharge   float64 `json:"before_charge,omitzero"`
	AfterCharge    float64 `json:"after_charge,omitzero"`
	Decline        float64 `json:"decline,omitzero"`
	Timeout        float64 `json:"timeout,omitzero"`
	RequiresAction float64 `json:"requires_action,omitzero"`
	Processing     float64 `json:"processing,omitzero"`
}

// validate reports whether r are probabilities that fit in one draw.
func (r Rates) validate() error {
	sum := 0.0
	for _, v := range []float64{r.BeforeCharge, r.AfterCharge, r.Decline, r.Timeout, r.RequiresAction, r.Processing} {
		// Written so that NaN fails too.
		if !(v >= 0 && v <= 1) {
			return fmt.Errorf("rates must be between 0 and 1")
		}
		sum += v
	}
	if sum > 1 {
		return fmt.Errorf("rates must add up to at most 1, got %g", sum)
	}
	return nil
}

// pick maps a uniform draw u in [0, 1) to the fault it lands on: the rates
// are laid end to end, and a draw past them all is FaultNone.
func (r Rates) pick(u float64) Fault {
	for _, f := range []struct {
		rate  float64
		fault Fault
	}{
		{r.BeforeCharge, FaultBeforeCharge},
		{r.AfterCharge, FaultAfterCharge},
		{r.Decline, FaultDecline},
		{r.Timeout, FaultTimeout},
		{r.RequiresAction, FaultRequiresAction},
		{r.Processing, FaultProcessing},
	} {
		if u < f.rate {
			return f.fault
		}
		u -= f.rate
	}
	return FaultNone
}

// fault is the fault one call meets: Fail when set, otherwise one drawn from
// the rates with u.
func (b Behaviour) fault(u float64) Fault {
	if b.Fail.normal() != FaultNone {
		return b.Fail.normal()
	}
	return b.Rates.pick(u)
}

// behaviourJSON is Behaviour on the wire: whole milliseconds are what a
// person types into a demo, and a Duration would marshal as nanoseconds.
type behaviourJSON struct {
	DelayMS int64 `json:"delay_ms"`
	Fail    Fault `json:"fail"`
	Times   int   `json:"times,omitzero"`
	Rates   Rates `json:"rates,omitzero"`
	// ProcessingMS is ProcessingFor.
	ProcessingMS int64 `json:"processing_ms,omitzero"`
	// Webhooks and Authentication are pointers so that an absent object
	// stays absent.
	Webhooks       *webhookFaultsJSON        `json:"webhooks,omitempty"`
	Authentication *authenticationFaultsJSON `json:"authentication,omitempty"`
	Refunds        *RefundFaults             `json:"refunds,omitempty"`
}

// Validate reports whether the provider would accept b.
func (b Behaviour) Validate() error {
	if b.Delay < 0 || b.Delay > MaxDelay {
		return fmt.Errorf("delay must be between 0 and %d ms", MaxDelay.Milliseconds())
	}
	if err := b.Rates.validate(); err != nil {
		return err
	}
	if b.ProcessingFor < 0 || b.ProcessingFor > MaxProcessing {
		return fmt.Errorf("processing must be between 0 and %d ms", MaxProcessing.Milliseconds())
	}
	if err := b.Webhooks.validate(); err != nil {
		return err
	}
	if b.Authentication.Delay < 0 || b.Authentication.Delay > MaxDelay {
		return fmt.Errorf("authentication delay must be between 0 and %d ms", MaxDelay.Milliseconds())
	}
	if b.Times < 0 {
		return fmt.Errorf("times must be 0 (every call) or more")
	}
	if err := b.Refunds.validate(); err != nil {
		return err
	}
	_, err := ParseFault(b.Fail.String())
	return err
}

// MarshalJSON encodes b as {"delay_ms": …, "fail": …}, with "times" and
// "rates" when set.
func (b Behaviour) MarshalJSON() ([]byte, error) {
	w := behaviourJSON{DelayMS: b.Delay.Milliseconds(), Fail: b.Fail.normal(), Times: b.Times, Rates: b.Rates,
		ProcessingMS: b.ProcessingFor.Milliseconds()}
	if b.Webhooks != (WebhookFaults{}) {
		w.Webhooks = &webhookFaultsJSON{WebhookFaults: b.Webhooks, DelayMS: b.Webhooks.Delay.Milliseconds()}
	}
	if b.Authentication != (AuthenticationFaults{}) {
		w.Authentication = &authenticationFaultsJSON{AuthenticationFaults: b.Authentication, DelayMS: b.Authentication.Delay.Milliseconds()}
	}
	if r := b.Refunds.normal(); r != (RefundFaults{}) {
		w.Refunds = &r
	}
	return json.Marshal(w)
}

// UnmarshalJSON decodes {"delay_ms": …, "fail": …, "rates": {…}}; a missing
// field means zero (no delay, no fault). Unknown fields, in rates too, are
// refused so that a misspelt "fault" is an error rather than a silent return
// to health.
func (b *Behaviour) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var w behaviourJSON
	if err := dec.Decode(&w); err != nil {
		return fmt.Errorf("behaviour: %w", err)
	}
	// Checked here, before the multiplication can overflow.
	if w.DelayMS < 0 || w.DelayMS > MaxDelay.Milliseconds() {
		return fmt.Errorf("behaviour: delay_ms must be between 0 and %d", MaxDelay.Milliseconds())
	}
	if err := w.Rates.validate(); err != nil {
		return fmt.Errorf("behaviour: %w", err)
	}
	if w.Times < 0 {
		return fmt.Errorf("behaviour: times must be 0 (every call) or more")
	}
	if w.ProcessingMS < 0 || w.ProcessingMS > MaxProcessing.Milliseconds() {
		return fmt.Errorf("behaviour: processing_ms must be between 0 and %d", MaxProcessing.Milliseconds())
	}
	var hooks WebhookFaults
	if w.Webhooks != nil {
		if w.Webhooks.DelayMS < 0 || w.Webhooks.DelayMS > MaxDelay.Milliseconds() {
			return fmt.Errorf("behaviour: webhooks delay_ms must be between 0 and %d", MaxDelay.Milliseconds())
		}
		hooks = w.Webhooks.WebhookFaults
		hooks.Delay = time.Duration(w.Webhooks.DelayMS) * time.Millisecond
		if err := hooks.validate(); err != nil {
			return fmt.Errorf("behaviour: %w", err)
		}
	}
	var auth AuthenticationFaults
	if w.Authentication != nil {
		if w.Authentication.DelayMS < 0 || w.Authentication.DelayMS > MaxDelay.Milliseconds() {
			return fmt.Errorf("behaviour: authentication delay_ms must be between 0 and %d", MaxDelay.Milliseconds())
		}
		auth = w.Authentication.AuthenticationFaults
		auth.Delay = time.Duration(w.Authentication.DelayMS) * time.Millisecond
	}
	var refunds RefundFaults
	if w.Refunds != nil {
		if err := w.Refunds.validate(); err != nil {
			return fmt.Errorf("behaviour: %w", err)
		}
		refunds = w.Refunds.normal()
	}
	*b = Behaviour{Delay: time.Duration(w.DelayMS) * time.Millisecond, Fail: w.Fail.normal(), Times: w.Times, Rates: w.Rates,
		ProcessingFor: time.Duration(w.ProcessingMS) * time.Millisecond, Webhooks: hooks, Authentication: auth, Refunds: refunds}
	return nil
}

// SetBehaviour changes how the following charging calls and refunds are
// treated.
// Calls already received keep the behaviour they arrived under.
func (p *Provider) SetBehaviour(b Behaviour) error {
	if err := b.Validate(); err != nil {
		return fmt.Errorf("set behaviour: %w", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	b.Fail, b.Refunds = b.Fail.normal(), b.Refunds.normal()
	p.behaviour = b
	return nil
}

// normal spells no fault "", so that refunds without faults are the zero
// value, which the JSON leaves out.
func (r RefundFaults) normal() RefundFaults {
	if r.Fail.normal() == FaultNone {
		r.Fail = ""
	}
	return r
}

// callBehaviour is the behaviour one charging call meets, taken in one
// snapshot so that a change mid-call cannot mix the delay of one setting
// with the fault of another. A call that meets a fault of a blip (Times)
// uses one of them up.
func (p *Provider) callBehaviour() Behaviour {
	p.mu.Lock()
	defer p.mu.Unlock()
	b := p.behaviour
	if b.Times > 0 {
		if p.behaviour.Times--; p.behaviour.Times == 0 {
			p.behaviour.Fail = FaultNone
		}
	}
	return b
}

// refundFault is the fault one refund meets, drawn only when refund rates
// are set (so that the draws of the charging calls stay the ones a fixed
// sequence expects). A refund that meets a fault of a blip uses one up.
func (p *Provider) refundFault() Fault {
	p.mu.Lock()
	r := p.behaviour.Refunds
	if r.Times > 0 {
		if p.behaviour.Refunds.Times--; p.behaviour.Refunds.Times == 0 {
			p.behaviour.Refunds.Fail = ""
		}
	}
	p.mu.Unlock()
	if r.Fail.normal() != FaultNone {
		return r.Fail.normal()
	}
	if r.Rates == (Rates{}) {
		return FaultNone
	}
	return r.Rates.pick(p.draw())
}

// Behaviour returns the current behaviour.
func (p *Provider) Behaviour() Behaviour {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.behaviour
}
