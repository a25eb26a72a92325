package idemcheck_test

import (
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"exactlyonce/bench/idemcheck"
)

// brokenServer is an API with idempotency keys that gets four things wrong
// on purpose: it compares no fingerprint, shares keys between callers,
// answers 500 to a duplicate that arrives while the original runs, and
// replays without the Location header. Everything else it does right.
type brokenServer struct {
	mu       sync.Mutex
	done     map[string]stored // by key alone: not scoped to the caller
	inFlight map[string]chan struct{}
}

type stored struct {
	status   int
	body     []byte
	location string
}

func newBrokenServer(tb testing.TB) *httptest.Server {
	tb.Helper()
	b := &brokenServer{done: map[string]stored{}, inFlight: map[string]chan struct{}{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /register", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusCreated, map[string]string{"token": rand.Text()})
	})
	mux.HandleFunc("GET /policy", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]int{"retention_seconds": 3600})
	})
	mux.HandleFunc("POST /things", b.create)
	srv := httptest.NewServer(mux)
	tb.Cleanup(srv.Close)
	return srv
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v) //nolint:errcheck // the client hung up: nothing to do
}

func (b *brokenServer) create(w http.ResponseWriter, r *http.Request) {
	if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "no token"})
		return
	}
	raw := r.Header.Get("Idempotency-Key")
	key, ok := strings.CutPrefix(raw, `"`)
	key, ok2 := strings.CutSuffix(key, `"`)
	if !ok || !ok2 || key == "" || len(key) > 255 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "bad or missing key"})
		return
	}
	var req struct{ N int }
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.N < 1 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "n must be positive"})
		return
	}

	b.mu.Lock()
	if s, ok := b.done[key]; ok {
		b.mu.Unlock()
		w.Header().Set("Idempotent-Replayed", "true") // but no Location
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(s.status)
		w.Write(s.body)
		return
	}
	if dup, ok := b.inFlight[key]; ok {
		close(dup)
		delete(b.inFlight, key)
		b.mu.Unlock()
		http.Error(w, "duplicate in flight", http.StatusInternalServerError)
		return
	}
	dup := make(chan struct{})
	b.inFlight[key] = dup
	b.mu.Unlock()

	// Hold the execution until a duplicate arrives, or briefly when none
	// does, so the concurrent scenario meets the 500 for certain.
	select {
	case <-dup:
	case <-time.After(300 * time.Millisecond):
	}
	id := rand.Text()
	body, _ := json.Marshal(map[string]any{"id": id, "n": req.N})
	s := stored{status: http.StatusCreated, body: body, location: "/things/" + id}
	b.mu.Lock()
	delete(b.inFlight, key)
	b.done[key] = s
	b.mu.Unlock()
	w.Header().Set("Location", s.location)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(s.status)
	w.Write(s.body)
}

// TestBrokenServerFailsExactlyItsFaults runs the shop profile against the
// broken server: its four faults, and nothing else, must fail.
func TestBrokenServerFailsExactlyItsFaults(t *testing.T) {
	srv := newBrokenServer(t)
	cfg, err := idemcheck.LoadConfig("testdata/broken.json")
	if err != nil {
		t.Fatal(err)
	}
	cfg.BaseURL = srv.URL
	card := check(t, cfg, "shop")

	want := []string{idemcheck.ReplayHeaders, idemcheck.Fingerprint, idemcheck.Concurrent, idemcheck.Scoping}
	if got := card.Failed(); !slices.Equal(got, want) {
		t.Errorf("got failed %v, want %v", got, want)
	}
	if got := card.FailedMusts(); !slices.Equal(got, want) {
		t.Errorf("got failed MUSTs %v, want %v", got, want)
	}
	if card.OK() {
		t.Error("got OK, want a failed run")
	}
}

// TestScorecardFormats checks that the JSON and Markdown scorecards carry
// the verdict scripts and readers look for.
func TestScorecardFormats(t *testing.T) {
	card := &idemcheck.Scorecard{Profile: "shop", Target: "POST http://x/y", Results: []idemcheck.Result{
		{ID: idemcheck.Replay, Title: "replay", Level: idemcheck.Must, Outcome: idemcheck.Failed, Detail: "a | b"},
		{ID: idemcheck.ReplayMarker, Title: "marker", Level: idemcheck.Should, Outcome: idemcheck.Passed},
	}}
	var js strings.Builder
	if err := card.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var got struct {
		OK      bool               `json:"ok"`
		Results []idemcheck.Result `json:"results"`
	}
	if err := json.Unmarshal([]byte(js.String()), &got); err != nil {
		t.Fatalf("decode %s: %v", js.String(), err)
	}
	if got.OK || len(got.Results) != 2 {
		t.Errorf("got ok %v and %d results, want false and 2", got.OK, len(got.Results))
	}
	var md strings.Builder
	if err := card.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if want := "| fail | MUST | replay (`replay`) | a \\| b |"; !strings.Contains(md.String(), want) {
		t.Errorf("got markdown\n%s\nwant a row %q", md.String(), want)
	}
}
