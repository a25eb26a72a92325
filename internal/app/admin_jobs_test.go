package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"exactlyonce/internal/apptest"
)

// The admin listener serves River UI, whose API lists the jobs a new order
// enqueued: the operators' view of the outbox.
func TestAdminServesRiverUI(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	c := h.NewCustomer(t)
	if r := h.PlaceOrder(t, c, "k", oneMug); r.Status != http.StatusCreated {
		t.Fatalf("place order: got %d %s", r.Status, r.Body)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- h.App.ServeAdmin(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("admin server: %v", err)
		}
	})
	base := "http://" + ln.Addr().String()
	resp, err := http.Get(base + "/riverui/api/jobs?state=available&limit=10")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var jobs struct {
		Data []struct {
			Kind  string `json:"kind"`
			State string `json:"state"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&jobs); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET jobs: got %d, %v", resp.StatusCode, err)
	}
	if len(jobs.Data) != 2 {
		t.Errorf("got %d available jobs in River UI, want 2 (%+v)", len(jobs.Data), jobs.Data)
	}
	// River UI's page, at its root and at an address its app routes in
	// the browser, links back to the operator's pages, once, inside the
	// body and outside the element its app draws into.
	for _, path := range []string{"/riverui/", "/riverui/jobs?state=available"} {
		page, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		// A Content-Length left at River UI's own would cut the page
		// short (or fail the read).
		html, err := io.ReadAll(page.Body)
		page.Body.Close()
		if err != nil || page.StatusCode != http.StatusOK || !strings.HasSuffix(strings.TrimSpace(string(html)), "</html>") {
			t.Fatalf("GET %s: got %d, %v, want 200 and the whole page", path, page.StatusCode, err)
		}
		doc, err := goquery.NewDocumentFromReader(bytes.NewReader(html))
		if err != nil {
			t.Fatal(err)
		}
		back := doc.Find(`body > a[data-testid=riverui-way-back]`)
		if back.Length() != 1 || back.AttrOr("href", "") != "/" || doc.Find("#root").Length() != 1 {
			t.Errorf("GET %s: got %d way-back links to %q beside River UI's #root, want one to /", path, back.Length(), back.AttrOr("href", ""))
		}
	}
	// Its scripts are untouched, whatever their type.
	page, err := http.Get(base + "/riverui/")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := goquery.NewDocumentFromReader(page.Body)
	page.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	src := doc.Find("script[type=module][src]").AttrOr("src", "")
	script, err := http.Get(base + src)
	if err != nil || src == "" {
		t.Fatalf("River UI's script %q: %v", src, err)
	}
	body, _ := io.ReadAll(script.Body)
	script.Body.Close()
	if script.StatusCode != http.StatusOK || strings.Contains(string(body), "riverui-way-back") {
		t.Errorf("GET %s: got %d, the way back inside: %v; want River UI's script as it is", src, script.StatusCode, strings.Contains(string(body), "riverui-way-back"))
	}
}
