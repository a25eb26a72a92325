package idemcheck

import (
	"fmt"
	"net/http"
	"slices"
)

// Level is how strongly a profile requires a scenario, in RFC 2119 terms.
// Only a failed MUST fails the run; a failed SHOULD is reported.
type Level string

const (
	Must   Level = "MUST"
	Should Level = "SHOULD"
	// Skip means the profile does not ask for the behaviour at all.
	Skip Level = "SKIP"
)

// Scenario ids, stable for JSON consumers of the scorecard.
const (
	MissingKey      = "missing-key"
	MalformedKey    = "malformed-key"
	OversizedKey    = "oversized-key"
	Replay          = "replay"
	ReplayMarker    = "replay-marker"
	ReplayHeaders   = "replay-headers"
	Fingerprint     = "fingerprint"
	Concurrent      = "concurrent-duplicates"
	Scoping         = "caller-scoping"
	ReuseAfter4xx   = "reuse-after-validation-error"
	RetentionPolicy = "retention-policy"
)

// Profile is one reading of the contract: how strongly each scenario is
// required, which status a fingerprint mismatch must get, how the key is
// written, and defaults for an API that follows it.
type Profile struct {
	Name   string
	About  string
	Levels map[string]Level
	// MismatchStatus lists the statuses accepted for "same key, other body".
	MismatchStatus []int
	// QuoteKey sends keys as Structured Field strings ("…"), as the IETF
	// draft defines the header; Stripe's clients send the bare key.
	QuoteKey bool
	Defaults Config
}

// Profiles are the built-in profiles by name.
var Profiles = map[string]Profile{
	"ietf": {
		Name: "ietf",
		About: "draft-ietf-httpapi-idempotency-key-header (latest draft): the statuses are SHOULDs " +
			"there; only that a key executes once and replays its result is a MUST",
		Levels: map[string]Level{
			MissingKey: Should, MalformedKey: Should, OversizedKey: Skip,
			Replay: Must, ReplayMarker: Skip, ReplayHeaders: Should,
			Fingerprint: Should, Concurrent: Must, Scoping: Should,
			ReuseAfter4xx: Should, RetentionPolicy: Should,
		},
		MismatchStatus: []int{http.StatusUnprocessableEntity},
		QuoteKey:       true,
	},
	"stripe": {
		Name: "stripe",
		About: "Stripe's documented behaviour: keys are optional, scoped to the account, at most 255 " +
			"characters, replays are marked Idempotent-Replayed: true, a mismatch is a 400 " +
			"idempotency_error, and failed validation saves no result",
		Levels: map[string]Level{
			MissingKey: Skip, MalformedKey: Skip, OversizedKey: Should,
			Replay: Must, ReplayMarker: Must, ReplayHeaders: Should,
			Fingerprint: Must, Concurrent: Must, Scoping: Must,
			ReuseAfter4xx: Must, RetentionPolicy: Skip,
		},
		MismatchStatus: []int{http.StatusBadRequest, http.StatusUnprocessableEntity},
	},
	"shop": {
		Name:  "shop",
		About: "exactlyonce's full contract: every scenario is a MUST",
		Levels: map[string]Level{
			MissingKey: Must, MalformedKey: Must, OversizedKey: Must,
			Replay: Must, ReplayMarker: Must, ReplayHeaders: Must,
			Fingerprint: Must, Concurrent: Must, Scoping: Must,
			ReuseAfter4xx: Must, RetentionPolicy: Must,
		},
		MismatchStatus: []int{http.StatusUnprocessableEntity},
		QuoteKey:       true,
		Defaults: Config{
			Path:             "/api/orders",
			Body:             `{"items":[{"sku":"mug-espresso","quantity":` + Placeholder + `}]}`,
			InvalidBody:      `{"items":[]}`,
			IDPointer:        "/order_id",
			PolicyPath:       "/api/idempotency-policy",
			RetentionPointer: "/retention_seconds",
			Register: &Register{
				Path: "/api/customers", Body: `{"name":"idemcheck"}`,
				TokenPointer: "/token", Header: "Authorization", Format: "Bearer %s",
			},
		},
	},
}

// ProfileNames lists the built-in profiles, sorted.
func ProfileNames() []string {
	names := make([]string, 0, len(Profiles))
	for n := range Profiles {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// LookupProfile returns the named built-in profile.
func LookupProfile(name string) (Profile, error) {
	p, ok := Profiles[name]
	if !ok {
		return Profile{}, fmt.Errorf("unknown profile %q (have %v)", name, ProfileNames())
	}
	return p, nil
}
