package idemcheck_test

import (
	"bytes"
	"context"
	"testing"

	"exactlyonce/bench/idemcheck"
	"exactlyonce/internal/apptest"
)

// check runs profile against base and fails the test on a setup error.
func check(tb testing.TB, cfg idemcheck.Config, profile string) *idemcheck.Scorecard {
	tb.Helper()
	p, err := idemcheck.LookupProfile(profile)
	if err != nil {
		tb.Fatal(err)
	}
	c, err := idemcheck.New(cfg, p)
	if err != nil {
		tb.Fatal(err)
	}
	card, err := c.Run(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	var text bytes.Buffer
	if err := card.WriteText(&text); err != nil {
		tb.Fatal(err)
	}
	tb.Log("\n" + text.String())
	return card
}

// TestShopPassesEveryProfile runs the checker against the real shop, on a
// real database, registering its own customers the way -profile shop does
// against `make run`.
func TestShopPassesEveryProfile(t *testing.T) {
	h := apptest.New(t)
	for _, profile := range idemcheck.ProfileNames() {
		t.Run(profile, func(t *testing.T) {
			shop := idemcheck.Profiles["shop"].Defaults
			shop.BaseURL = h.URL
			card := check(t, shop, profile)
			if got := card.Failed(); len(got) != 0 {
				t.Errorf("got failed scenarios %v, want none", got)
			}
			if profile == "shop" {
				for _, r := range card.Results {
					if r.Outcome != idemcheck.Passed {
						t.Errorf("%s: got %s, want pass under the shop profile", r.ID, r.Outcome)
					}
				}
			}
		})
	}
}
