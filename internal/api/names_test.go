package api_test

import (
	"net/http"
	"strings"
	"testing"

	"exactlyonce/internal/apptest"
	"exactlyonce/internal/problem"
)

// A name holding a bidirectional control (U+202E RIGHT-TO-LEFT OVERRIDE and
// its kin) is refused, 400 naming the field, wherever a name is taken: it
// reorders what a receipt, a log line or an operator's screen shows after
// it ("Ada\u202Egnp.exe" reads "Adaexe.png"). Nothing is stored.
func TestNamesRefuseBidiControls(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	c := h.NewCustomer(t)
	for _, bidi := range []string{`\u202e`, `\u202a`, `\u2066`, `\u2069`, `\u200f`, `\u061c`} {
		t.Run(bidi, func(t *testing.T) {
			p := apptest.WantProblem(t, h.Do(t, http.MethodPost, "/api/customers", `{"name":"Ada`+bidi+`gnp.exe"}`), problem.InvalidRequest)
			if !strings.Contains(p.Detail, "name") {
				t.Errorf("customer: got detail %q, want it to name the field", p.Detail)
			}
			p = apptest.WantProblem(t, h.Do(t, http.MethodPost, "/api/pickups", `{"slot": "mon-am", "name": "Ada`+bidi+`gnp.exe"}`,
				"Authorization", "Bearer "+c.Token, "Idempotency-Key", `"bidi`+bidi[2:]+`"`), problem.InvalidRequest)
			if !strings.HasPrefix(p.Detail, "name: ") {
				t.Errorf("pickup: got detail %q, want it to name the field", p.Detail)
			}
		})
	}
	if n := h.Count(t, `SELECT count(*) FROM pickup_reservations`); n != 0 {
		t.Errorf("got %d reservations, want none", n)
	}
}
