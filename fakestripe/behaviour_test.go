package fakestripe_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"exactlyonce/fakestripe"
)

func TestParseFault(t *testing.T) {
	for _, name := range []string{"none", "before_charge", "after_charge", "decline", "timeout", "requires_action", "processing"} {
		f, err := fakestripe.ParseFault(name)
		if err != nil {
			t.Errorf("ParseFault(%q): %v", name, err)
			continue
		}
		if got := f.String(); got != name {
			t.Errorf("ParseFault(%q).String(): got %q, want %q", name, got, name)
		}
	}
	_, err := fakestripe.ParseFault("explode")
	if err == nil {
		t.Fatal(`ParseFault("explode"): got no error, want one`)
	}
	if !strings.Contains(err.Error(), "before_charge") {
		t.Errorf("got error %q, want it to list the valid faults", err)
	}
}

func TestBehaviourJSON(t *testing.T) {
	var b fakestripe.Behaviour
	if err := json.Unmarshal([]byte(`{"delay_ms": 250, "fail": "after_charge"}`), &b); err != nil {
		t.Fatalf("Unmarshal: %v", err)
	}
	want := fakestripe.Behaviour{Delay: 250 * time.Millisecond, Fail: fakestripe.FaultAfterCharge}
	if b != want {
		t.Errorf("got %+v, want %+v", b, want)
	}
	out, err := json.Marshal(b)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	if got, want := string(out), `{"delay_ms":250,"fail":"after_charge"}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}

	var zero fakestripe.Behaviour
	if err := json.Unmarshal([]byte(`{}`), &zero); err != nil {
		t.Fatalf("Unmarshal({}): %v", err)
	}
	if want := (fakestripe.Behaviour{Fail: fakestripe.FaultNone}); zero != want {
		t.Errorf("got %+v from {}, want %+v", zero, want)
	}
}

func TestBehaviourJSONRejects(t *testing.T) {
	for _, body := range []string{
		`{"fail": "explode"}`,
		`{"fault": "timeout"}`,
		`{"delay_ms": -1}`,
		`{"delay_ms": 600000}`,
		`{"delay_ms": 1.5}`,
	} {
		var b fakestripe.Behaviour
		if err := json.Unmarshal([]byte(body), &b); err == nil {
			t.Errorf("Unmarshal(%s): got %+v and no error, want an error", body, b)
		}
	}
}

func TestSetBehaviourValidates(t *testing.T) {
	p := fakestripe.New(nil, "secret")
	if got, want := p.Behaviour(), (fakestripe.Behaviour{Fail: fakestripe.FaultNone}); got != want {
		t.Errorf("new provider: got %+v, want %+v", got, want)
	}
	for _, b := range []fakestripe.Behaviour{
		{Delay: -time.Second},
		{Delay: fakestripe.MaxDelay + time.Millisecond},
		{Fail: fakestripe.Fault("explode")},
	} {
		if err := p.SetBehaviour(b); err == nil {
			t.Errorf("SetBehaviour(%+v): got no error, want one", b)
		}
	}
	want := fakestripe.Behaviour{Delay: time.Second, Fail: fakestripe.FaultTimeout}
	if err := p.SetBehaviour(want); err != nil {
		t.Fatalf("SetBehaviour(%+v): %v", want, err)
	}
	if got := p.Behaviour(); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	// The zero Fault is spelt out, so that the demo API always names one.
	if err := p.SetBehaviour(fakestripe.Behaviour{}); err != nil {
		t.Fatalf("SetBehaviour(zero): %v", err)
	}
	if got := p.Behaviour().Fail; got != fakestripe.FaultNone {
		t.Errorf("got fault %q after setting the zero Behaviour, want %q", got, fakestripe.FaultNone)
	}
}

func TestBehaviourJSONWithRates(t *testing.T) {
	// The demo body with fault rates, as chaos runs send it.
	const body = `{"delay_ms":0,"fail":"none","rates":{"after_charge":0.1,"timeout":0.05,"before_charge":0.05,"decline":0.02}}`
	var b fakestripe.Behaviour
	if err := json.Unmarshal([]byte(body), &b); err != nil {
		t.Fatalf("Unmarshal: %v", err)
	}
	want := fakestripe.Behaviour{Fail: fakestripe.FaultNone, Rates: fakestripe.Rates{
		AfterCharge: 0.1, Timeout: 0.05, BeforeCharge: 0.05, Decline: 0.02,
	}}
	if b != want {
		t.Errorf("got %+v, want %+v", b, want)
	}
	out, err := json.Marshal(b)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	const canonical = `{"delay_ms":0,"fail":"none","rates":{"before_charge":0.05,"after_charge":0.1,"decline":0.02,"timeout":0.05}}`
	if string(out) != canonical {
		t.Errorf("got %s, want %s", out, canonical)
	}
	for _, bad := range []string{
		`{"rates": {"after_charge": 1.5}}`,
		`{"rates": {"after_charge": -0.1}}`,
		`{"rates": {"after_charge": 0.6, "timeout": 0.6}}`,
		`{"rates": {"explode": 0.1}}`,
	} {
		var b fakestripe.Behaviour
		if err := json.Unmarshal([]byte(bad), &b); err == nil {
			t.Errorf("Unmarshal(%s): got %+v and no error, want an error", bad, b)
		}
	}
}

// The bank page's faults and the webhooks' loss travel in the demo body
// and come back as they went; a delay out of range is refused.
func TestBehaviourJSONWithAuthenticationFaults(t *testing.T) {
	const body = `{"delay_ms":0,"fail":"none","webhooks":{"lose":0.5},"authentication":{"lose_return":true,"delay_ms":1500}}`
	var b fakestripe.Behaviour
	if err := json.Unmarshal([]byte(body), &b); err != nil {
		t.Fatalf("Unmarshal: %v", err)
	}
	want := fakestripe.Behaviour{Fail: fakestripe.FaultNone, Webhooks: fakestripe.WebhookFaults{Lose: 0.5},
		Authentication: fakestripe.AuthenticationFaults{LoseReturn: true, Delay: 1500 * time.Millisecond}}
	if b != want {
		t.Errorf("got %+v, want %+v", b, want)
	}
	out, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != body {
		t.Errorf("got %s, want %s", out, body)
	}
	for _, bad := range []string{`{"authentication":{"delay_ms":600000}}`, `{"webhooks":{"lose":2}}`, `{"authentication":{"lose":true}}`} {
		if err := json.Unmarshal([]byte(bad), &b); err == nil {
			t.Errorf("Unmarshal(%s): got no error, want one", bad)
		}
	}
}
