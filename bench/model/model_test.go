package model

import (
	"os"
	"strings"
	"testing"
)

// configurations are the bounds the model is checked within (see the head
// of exactlyonce.pml and docs/model.md): reuse and long without 3-D Secure's
// way back (a confirm left requires_action is canceled), sca with it (the
// key parked awaiting authentication, settled by the shopper's return, the
// webhook or the completer's window cancel), apart because the default
// configuration with it would not fit in make test's time.
var configurations = []struct {
	name    string
	defines []string
}{
	{"reuse", nil},
	{"long", []string{"-DLONG"}},
	{"sca", []string{"-DSCA"}},
}

// claims are the searches of each configuration: the assertions with the
// check for invalid end states (a deadlock in the model would hide
// behaviour), then each LTL property, which pan checks with the assertions.
var claims = []string{"", "lease_covers_calls", "answer_is_final"}

// TestModelHolds has SPIN search every state of each configuration and
// fails on any violation. MODEL_DEFINES (e.g. -DMUT_NO_FENCE) adds macros
// to the model, to see it fail.
func TestModelHolds(t *testing.T) {
	needSpin(t)
	extra := strings.Fields(os.Getenv("MODEL_DEFINES"))
	for _, c := range configurations {
		for _, claim := range claims {
			name := claim
			if claim == "" {
				name = "assertions"
			}
			// Each search is a subtest of its own, with a verifier of its
			// own (a failed search writes its trail beside it), so that the
			// searches share the cores: the largest take some 20 s each.
			t.Run(c.name+"/"+name, func(t *testing.T) {
				t.Parallel()
				defines := append(append([]string{}, c.defines...), extra...)
				var pan []string // the verifier's own compile flags
				if claim == "" {
					pan = []string{"-DNOCLAIM"}
				}
				v := build(t, defines, pan...)
				r := v.search(t, claim)
				if r.errors != 0 {
					t.Fatalf("%s, %s: %d error(s); the trail:\n%s\n%s", c.name, name, r.errors, narration(v.replay(t)), r.out)
				}
				r.exhaustive(t)
				t.Logf("%s, %s: no errors; %s", c.name, name, r)
			})
		}
	}
}

// mutations each switch one safeguard of the protocol off. SPIN must find
// a counterexample, and it must be the expected violation: an assertion's
// invariant, named by the model's "MODEL: invariant X violated", or the
// LTL claim the search ran with. Breadth-first search finds the shortest
// counterexample, which is the one docs/model.md tells.
var mutations = []struct {
	name   string
	define string
	config string // the configuration's macro ("" for the default one)
	claim  string
	want   string
}{
	// The finish guarded by status alone: a stalled attempt of the first
	// purchase finishes into the row of the second, and its charge gets a
	// second order.
	{"finish without the token guard", "-DMUT_FINISH_NO_TOKEN", "", "", "ONE_ORDER_PER_KEY"},
	// The completer retrieves the intent and takes "not confirmed yet"
	// for "never": it stores payment-not-completed while the original
	// confirm can still land.
	{"completer looks instead of cancelling", "-DMUT_COMPLETER_LOOKS", "", "", "NO_CHARGE_IS_FINAL"},
	// A request confirms its intent even when its fenced store of the id
	// wrote nothing: the completer, finding no id stored past the key
	// window, stores payment-not-completed without a call, and the
	// confirm charges.
	{"confirm without the stored id", "-DMUT_CONFIRM_UNSTORED", "", "", "NO_CHARGE_IS_FINAL"},
	// No self-fence: a request whose renewals fail keeps waiting on its
	// call while its lease runs out.
	{"no self-fencing", "-DMUT_NO_FENCE", "", "lease_covers_calls", "lease_covers_calls"},
	// The sweeper selects by age alone and deletes a key still started.
	{"sweeper deletes started keys", "-DMUT_SWEEP_STARTED", "", "", "NEVER_SWEPT_STARTED"},
	// An answer remembered beyond the retention is replayed to the next
	// purchase under the key, as "nothing charged", while it is charged.
	{"answers remembered beyond retention", "-DMUT_REMEMBER_LONG", "", "", "NO_CHARGE_IS_FINAL"},
	// A request takes a confirm answered 200 with the intent
	// requires_action (3-D Secure) for a charge: it writes an order that
	// no succeeded charge pays for.
	{"requires_action taken for paid", "-DMUT_ACTION_PAID", "", "", "ORDER_HAS_CHARGE"},
	// A request takes a confirm answered 200 with the intent processing
	// for a charge, as the shop did before issue 33: it writes an order
	// that no succeeded charge pays for (yet, and perhaps ever).
	{"processing taken for paid", "-DMUT_PROCESSING_PAID", "", "", "ORDER_HAS_CHARGE"},
	// A request finishes an intent still processing as not completed, as
	// if it were canceled: the client is told "nothing charged" while the
	// provider may still make the charge succeed.
	{"processing taken for final", "-DMUT_PROCESSING_FINAL", "", "", "NO_CHARGE_IS_FINAL"},
	// The shopper's return settles the key without TakeStuckKey: no new
	// token and no lease of its own, its writes fenced by the token it
	// found. Finding the intent still requires_action within the window,
	// it hands back (Expire) the lease of the retry that holds the key and
	// waits on its confirm.
	{"return settles without taking the key", "-DMUT_SETTLE_NO_FENCE", "-DSCA", "lease_covers_calls", "lease_covers_calls"},
	// A key awaiting authentication past the window is finished not
	// completed without the cancel at the provider, as if the window's end
	// closed the bank's page: the shopper is told nothing was charged while
	// they can still complete the authentication and be charged.
	{"window's end taken for the bank's", "-DMUT_WINDOW_NO_CANCEL", "-DSCA", "", "NO_CHARGE_IS_FINAL"},
}

// TestMutationsBreakTheModel checks that every safeguard the model relies
// on is needed: without it, SPIN finds the expected violation.
func TestMutationsBreakTheModel(t *testing.T) {
	needSpin(t)
	for _, m := range mutations {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			search := []string{"-DBFS"}
			if m.claim == "" {
				search = append(search, "-DNOCLAIM")
			}
			defines := []string{m.define}
			if m.config != "" {
				defines = append(defines, m.config)
			}
			v := build(t, defines, search...)
			r := v.search(t, m.claim)
			if r.errors == 0 {
				t.Fatalf("%s: SPIN found no violation, want %s\n%s", m.define, m.want, r.out)
			}
			replay := v.replay(t)
			got := violation(r.out, replay)
			if got != m.want {
				t.Fatalf("%s: the trail shows %q, want %q\n%s\n%s", m.define, got, m.want, narration(replay), replay)
			}
			t.Logf("%s: %s violated, as it must be (%s); the counterexample:\n%s", m.define, got, r, narration(replay))
		})
	}
}

// violation names what a counterexample violates: the invariant the
// model's check printed in the replay, or the LTL claim whose assertion pan
// reports failing, told apart by the state its formula reads ("" when
// neither shows).
func violation(pan, replay string) string {
	if _, rest, ok := strings.Cut(replay, "MODEL: invariant "); ok {
		name, _, _ := strings.Cut(rest, " ")
		return name
	}
	_, text, ok := strings.Cut(pan, "assertion violated  !( !(")
	if !ok {
		return ""
	}
	text, _, _ = strings.Cut(text, "\n")
	switch {
	case strings.Contains(text, "k_lease>0"):
		return "lease_covers_calls"
	case strings.Contains(text, "firstans"):
		return "answer_is_final"
	}
	return ""
}
