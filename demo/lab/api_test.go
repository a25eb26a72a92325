package lab_test

import (
	"net/http"
	"strings"
	"testing"

	"exactlyonce/internal/apptest"
	"exactlyonce/internal/problem"
)

// With the lab mounted, the shop serves its controls (/api/demo/...); the
// shop alone does not (internal/api's TestNoDemoControlsInTheShop).
func TestDemoControlsWithTheLab(t *testing.T) {
	t.Parallel()
	demo := apptest.New(t, withLab)
	apptest.WantProblem(t, demo.Do(t, http.MethodPut, "/api/demo/provider", `{"fail":"explode"}`), problem.InvalidRequest)
	r := demo.Do(t, http.MethodGet, "/api/demo/stats", "")
	var stats map[string]int64
	r.JSON(t, &stats)
	for _, k := range []string{"charges", "orders", "keys_started", "keys_finished"} {
		if _, ok := stats[k]; !ok || r.Status != http.StatusOK {
			t.Errorf("stats: got %d %s, want 200 with %q", r.Status, r.Body, k)
		}
	}
}

func TestDemoProviderBodyIsStrict(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withLab)
	for name, body := range map[string]string{
		"trailing ]": `{"fail": "decline"}]`,
		"duplicate":  `{"fail": "decline", "fail": "none"}`,
	} {
		r := h.Do(t, http.MethodPut, "/api/demo/provider", body)
		if r.Status != http.StatusBadRequest {
			t.Errorf("%s: got %d %s, want 400", name, r.Status, r.Body)
		}
	}
	if got := h.Provider.Behaviour().Fail; got != "none" {
		t.Errorf("got provider fault %q, want none: no refused body may change it", got)
	}
}

// A page that rebinds its domain to the server's address sends its own
// name as Host; it must not reach the lab's controls, which set the
// provider's faults.
func TestHostAllowListGuardsTheDemoControls(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withLab, func(cfg *apptest.Setup) { cfg.AllowedHosts = []string{"shop.example"} })
	for _, host := range []string{"rebind.attacker.example", "rebind.attacker.example:80", "shop.example.attacker.example"} {
		req, err := http.NewRequest(http.MethodPut, h.URL+"/api/demo/provider", strings.NewReader(`{"fail": "decline"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMisdirectedRequest {
			t.Errorf("%s: got %d, want 421", host, resp.StatusCode)
		}
	}
	if got := h.Provider.Behaviour().Fail; got != "none" {
		t.Errorf("got provider fault %q after refused requests, want none", got)
	}
}
