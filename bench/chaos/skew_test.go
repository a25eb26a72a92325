package chaos

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestParseClockSkews(t *testing.T) {
	got, err := ParseClockSkews("−5m, +3m,+90s/+30s")
	if err != nil {
		t.Fatal(err)
	}
	want := []ClockSkew{{Offset: -5 * time.Minute}, {Offset: 3 * time.Minute}, {Offset: 90 * time.Second, DriftPerMinute: 30 * time.Second}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("skew %d: got %v, want %v", i, got[i], want[i])
		}
	}
	for _, bad := range []string{"5", "+1m/x", "0/-2m"} {
		if _, err := ParseClockSkews(bad); err == nil {
			t.Errorf("%q: got no error, want one", bad)
		}
	}
	if c := (Config{ClockSkews: want}); c.skewEnv(4)[0] != "CHAOS_CLOCK_OFFSET_NS=180000000000" {
		t.Errorf("shop 4's skew: got %v, want the second's (the list taken again)", c.skewEnv(4))
	}
}

// A shop whose clock is not off as asked is refused: a run with a web
// binary built without the skewed runtime would pass skewed without ever
// being skewed. The shop here is an HTTP server on the machine's clock;
// then one whose Date header says five minutes behind.
func TestCheckClocksRefusesAnUnskewedShop(t *testing.T) {
	var behind time.Duration
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if behind != 0 {
			w.Header().Set("Date", time.Now().Add(-behind).UTC().Format(http.TimeFormat))
		}
	}))
	defer srv.Close()
	cl := &cluster{
		cfg:   Config{ClockSkews: []ClockSkew{{Offset: -5 * time.Minute}}},
		shops: []*process{{name: "web-0", addr: strings.TrimPrefix(srv.URL, "http://")}},
	}
	logf := func(string, ...any) {}
	_, err := cl.checkClocks(context.Background(), time.Now(), logf)
	if err == nil || !strings.Contains(err.Error(), "skewed runtime") {
		t.Fatalf("a shop on the machine's clock: got %v, want the run refused", err)
	}
	behind = 5 * time.Minute
	reports, err := cl.checkClocks(context.Background(), time.Now(), logf)
	if err != nil {
		t.Fatalf("a shop five minutes behind: got %v, want it accepted", err)
	}
	if got := reports[0].AtStart; got > -299 || got < -301.5 {
		t.Errorf("its clock read: got %.1f s, want about -300", got)
	}
}
