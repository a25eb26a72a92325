package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"exactlyonce/internal/apptest"
	"exactlyonce/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestShopProfileExitsZero runs the command as the README does against
// `make run`: only -base and -profile shop, here against the real shop.
func TestShopProfileExitsZero(t *testing.T) {
	h := apptest.New(t)
	var stdout, stderr bytes.Buffer
	code := run([]string{"-base", h.URL, "-profile", "shop", "-format", "json"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("got exit %d, want 0\n%s%s", code, stdout.String(), stderr.String())
	}
	var card struct {
		OK      bool `json:"ok"`
		Results []struct{ ID, Outcome string }
	}
	if err := json.Unmarshal(stdout.Bytes(), &card); err != nil {
		t.Fatalf("decode scorecard %q: %v", stdout.String(), err)
	}
	if !card.OK || len(card.Results) != 11 {
		t.Errorf("got ok %v with %d results, want ok with 11", card.OK, len(card.Results))
	}
}

func TestUsageErrorsExitTwo(t *testing.T) {
	for _, args := range [][]string{
		{"-profile", "nope", "-base", "http://127.0.0.1:1", "-path", "/x"},
		{"-profile", "ietf"}, // no base URL
		{"-auth", "no colon", "-base", "http://127.0.0.1:1", "-path", "/x"},
	} {
		var out bytes.Buffer
		if code := run(args, &out, &out); code != 2 {
			t.Errorf("%v: got exit %d, want 2 (%s)", args, code, out.String())
		}
	}
}
