package app_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"exactlyonce/internal/apptest"
	"exactlyonce/internal/problem"
)

// /traces narrows the kept traces by route and to the failed ones, says
// what a key-less query lacks instead of "None kept", and a failed trace's
// page opens its failing span.
func TestTracesFilterByRouteAndFailure(t *testing.T) {
	t.Parallel()
	s := newTracedShop(t)
	c := s.NewCustomer(t)
	if r := s.PlaceOrder(t, c, "ok", oneMug); r.Status != http.StatusCreated {
		t.Fatalf("order: got %d %s", r.Status, r.Body)
	}
	s.SetProvider(t, 0, "before_charge")
	failed := s.PlaceOrder(t, c, "down", oneMug)
	s.SetProvider(t, 0, "none")
	var p problem.Problem
	_ = json.Unmarshal(failed.Body, &p)
	failedID := strings.TrimPrefix(p.Instance, "urn:trace:")
	if failed.Status < 500 || failedID == "" {
		t.Fatalf("the failed order: got %d %s, want a 5xx problem naming its trace", failed.Status, failed.Body)
	}
	if r := s.Do(t, http.MethodGet, "/api/products", ""); r.Status != http.StatusOK {
		t.Fatalf("products: got %d", r.Status)
	}
	for deadline := time.Now().Add(10 * time.Second); s.Admin(t, "/traces/"+failedID).Status != http.StatusOK; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the failed order's trace %s is not kept after 10 s", failedID)
		}
	}

	doc := parse(t, s.Admin(t, "/traces?failed=1"))
	if doc.Find(`[data-trace-id="`+failedID+`"]`).Length() != 1 {
		t.Errorf("failed only: the failed order's trace %s is not listed", failedID)
	}
	doc.Find(`[data-testid="trace"]`).Each(func(_ int, row *goquery.Selection) {
		if row.Find(`.ops-failed`).Length() != 1 {
			id, _ := row.Attr("data-trace-id")
			t.Errorf("failed only: trace %s is listed but did not fail", id)
		}
	})
	roots := parse(t, s.Admin(t, "/traces?route=GET+/api/products")).Find(`[data-testid="trace"] td a`)
	if roots.Length() == 0 {
		t.Error("route: no trace of GET /api/products listed")
	}
	roots.Each(func(_ int, a *goquery.Selection) {
		if !strings.Contains(a.Text(), "/api/products") {
			t.Errorf("route: got a trace of %q", a.Text())
		}
	})
	hint := parse(t, s.Admin(t, "/traces?customer="+c.ID.String())).Find(`[data-testid="traces-hint"]`).Text()
	if !strings.Contains(hint, "give the key too") {
		t.Errorf("customer alone: got hint %q, want it to ask for the key", hint)
	}
	if parse(t, s.Admin(t, "/traces/"+failedID)).Find(`details[open]`).Length() == 0 {
		t.Error("the failed trace's page: no span open, want the failing one open")
	}
}

// /traces says how far back it reaches (the oldest kept trace's start, and
// nothing from before the process or from another one) and where older
// traces are: nowhere, with the setting that changes it, or the collector
// spans are exported to, its address shown without a password.
func TestTracesSayHowFarBackTheyReach(t *testing.T) {
	t.Parallel()
	before := time.Now()
	s := newTracedShop(t)
	c := s.NewCustomer(t)
	if r := s.PlaceOrder(t, c, "k", oneMug); r.Status != http.StatusCreated {
		t.Fatalf("order: got %d %s", r.Status, r.Body)
	}
	s.span(t, "POST /api/orders", nil)
	oldest := s.App.Tracing.Recent.Usage().Oldest
	if oldest.Before(before) || oldest.After(time.Now()) {
		t.Fatalf("got the oldest trace begun at %v, want within the test (from %v)", oldest, before)
	}
	doc := parse(t, s.Admin(t, "/traces"))
	kept := doc.Find(`[data-testid=traces-kept]`).Text()
	if want := "the oldest begun " + oldest.UTC().Format("2 Jan 15:04:05 MST"); !strings.Contains(kept, want) ||
		!strings.Contains(kept, "none from before this process started") {
		t.Errorf("got %q, want it to say %q and that nothing older is kept", kept, want)
	}
	if reach := doc.Find(`[data-testid=traces-reach]`).Text(); !strings.Contains(reach, "set OTEL_EXPORTER_OTLP_ENDPOINT") {
		t.Errorf("without a collector: got %q, want the setting that keeps traces longer", reach)
	}

	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	t.Cleanup(collector.Close)
	cfg := apptest.DefaultTracing()
	cfg.Endpoint = strings.Replace(collector.URL, "http://", "http://otel:s3cret@", 1)
	exported := apptest.NewTraced(t, cfg)
	reach := parse(t, exported.Admin(t, "/traces")).Find(`[data-testid=traces-reach]`).Text()
	if want := "exported to the collector at " + strings.Replace(collector.URL, "http://", "http://otel:xxxxx@", 1); !strings.Contains(reach, want) || strings.Contains(reach, "s3cret") {
		t.Errorf("with a collector: got %q, want %q (no password)", reach, want)
	}
}
