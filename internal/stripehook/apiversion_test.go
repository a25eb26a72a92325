package stripehook_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v85"
)

// TestEventsOfAnotherAPIReleaseAreRefused: the SDK's ConstructEvent takes
// an event only when its api_version is of the SDK's release (the name
// after the dot: basil, clover, dahlia), whatever its date. Each major of
// stripe-go that moves to a new release therefore refuses the events of a
// webhook endpoint left on the old one: an operator must move the
// endpoint's API version with the SDK (docs/operations.md, "Stripe's test
// mode"). The fake names the SDK's own version, so only this test sees it.
// Before the move to v83 (clover), stripe-go v82 took the basil event;
// before the move to v85 (dahlia), v84 took the clover one.
func TestEventsOfAnotherAPIReleaseAreRefused(t *testing.T) {
	t.Parallel()
	h := newShop(t)
	object := []byte(`{"id": "pi_versioned", "object": "payment_intent", "status": "canceled", "metadata": {}}`)
	for id, version := range map[string]string{
		"evt_basil":      "2025-08-27.basil",  // stripe-go v82's release
		"evt_clover":     "2026-02-25.clover", // v83's and v84's
		"evt_no_release": "2024-06-20",        // before Stripe named releases
	} {
		r := postVersion(t, h, version, id, "payment_intent.canceled", object, time.Now(), secret)
		if r.Status != http.StatusBadRequest {
			t.Errorf("an event of %s: got %d %s, want 400", version, r.Status, strings.TrimSpace(string(r.Body)))
		}
	}
	if n := count(t, h, `SELECT count(*) FROM stripe_events WHERE event_id IN ('evt_basil', 'evt_clover', 'evt_no_release')`); n != 0 {
		t.Errorf("got %d of the refused events stored, want 0", n)
	}
	// A later version of the SDK's own release, such as an account
	// upgraded since the SDK was cut sends, is taken.
	release := stripe.APIVersion[strings.Index(stripe.APIVersion, ".")+1:]
	later := "2099-12-31." + release
	r := postVersion(t, h, later, "evt_later", "payment_intent.canceled", object, time.Now(), secret)
	if r.Status != http.StatusOK || strings.TrimSpace(string(r.Body)) != "recorded" {
		t.Errorf("an event of %s: got %d %s, want 200 recorded", later, r.Status, strings.TrimSpace(string(r.Body)))
	}
}
