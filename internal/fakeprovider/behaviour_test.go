package fakeprovider_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"exactlyonce/internal/fakeprovider"
)

func TestParseFault(t *testing.T) {
	for _, name := range []string{"none", "before_charge", "after_charge", "decline", "timeout"} {
		f, err := fakeprovider.ParseFault(name)
		if err != nil {
			t.Errorf("ParseFault(%q): %v", name, err)
			continue
		}
		if got := f.String(); got != name {
			t.Errorf("ParseFault(%q).String(): got %q, want %q", name, got, name)
		}
	}
	_, err := fakeprovider.ParseFault("explode")
	if err == nil {
		t.Fatal(`ParseFault("explode"): got no error, want one`)
	}
	if !strings.Contains(err.Error(), "before_charge") {
		t.Errorf("got error %q, want it to list the valid faults", err)
	}
}

func TestBehaviourJSON(t *testing.T) {
	var b fakeprovider.Behaviour
	if err := json.Unmarshal([]byte(`{"delay_ms": 250, "fail": "after_charge"}`), &b); err != nil {
		t.Fatalf("Unmarshal: %v", err)
	}
	want := fakeprovider.Behaviour{Delay: 250 * time.Millisecond, Fail: fakeprovider.FaultAfterCharge}
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

	var zero fakeprovider.Behaviour
	if err := json.Unmarshal([]byte(`{}`), &zero); err != nil {
		t.Fatalf("Unmarshal({}): %v", err)
	}
	if want := (fakeprovider.Behaviour{Fail: fakeprovider.FaultNone}); zero != want {
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
		var b fakeprovider.Behaviour
		if err := json.Unmarshal([]byte(body), &b); err == nil {
			t.Errorf("Unmarshal(%s): got %+v and no error, want an error", body, b)
		}
	}
}

func TestSetBehaviourValidates(t *testing.T) {
	p := fakeprovider.New(nil, "secret")
	if got, want := p.Behaviour(), (fakeprovider.Behaviour{Fail: fakeprovider.FaultNone}); got != want {
		t.Errorf("new provider: got %+v, want %+v", got, want)
	}
	for _, b := range []fakeprovider.Behaviour{
		{Delay: -time.Second},
		{Delay: fakeprovider.MaxDelay + time.Millisecond},
		{Fail: fakeprovider.Fault("explode")},
	} {
		if err := p.SetBehaviour(b); err == nil {
			t.Errorf("SetBehaviour(%+v): got no error, want one", b)
		}
	}
	want := fakeprovider.Behaviour{Delay: time.Second, Fail: fakeprovider.FaultTimeout}
	if err := p.SetBehaviour(want); err != nil {
		t.Fatalf("SetBehaviour(%+v): %v", want, err)
	}
	if got := p.Behaviour(); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	// The zero Fault is spelt out, so that the demo API always names one.
	if err := p.SetBehaviour(fakeprovider.Behaviour{}); err != nil {
		t.Fatalf("SetBehaviour(zero): %v", err)
	}
	if got := p.Behaviour().Fail; got != fakeprovider.FaultNone {
		t.Errorf("got fault %q after setting the zero Behaviour, want %q", got, fakeprovider.FaultNone)
	}
}

func TestBehaviourJSONWithRates(t *testing.T) {
	// The demo body with fault rates, as chaos runs send it.
	const body = `{"delay_ms":0,"fail":"none","rates":{"after_charge":0.1,"timeout":0.05,"before_charge":0.05,"decline":0.02}}`
	var b fakeprovider.Behaviour
	if err := json.Unmarshal([]byte(body), &b); err != nil {
		t.Fatalf("Unmarshal: %v", err)
	}
	want := fakeprovider.Behaviour{Fail: fakeprovider.FaultNone, Rates: fakeprovider.Rates{
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
		var b fakeprovider.Behaviour
		if err := json.Unmarshal([]byte(bad), &b); err == nil {
			t.Errorf("Unmarshal(%s): got %+v and no error, want an error", bad, b)
		}
	}
}
