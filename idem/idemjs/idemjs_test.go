package idemjs_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"exactlyonce/idem/idemjs"
)

// The module is served as JavaScript (a browser refuses a module of
// another type), byte for byte as it is in the folder, under the prefix
// it is mounted at; nothing else of the folder is served.
func TestHandlerServesTheModule(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("GET /idem/", http.StripPrefix("/idem/", idemjs.Handler()))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	for _, tc := range []struct{ path, file, typ string }{
		{"/idem/idem.js", "idem.js", "text/javascript; charset=utf-8"},
		{"/idem/idem.d.ts", "idem.d.ts", ""},
	} {
		resp, err := http.Get(srv.URL + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want, err := os.ReadFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK || string(body) != string(want) {
			t.Errorf("GET %s: got %d and %d bytes, want 200 and %s's %d", tc.path, resp.StatusCode, len(body), tc.file, len(want))
		}
		if got := resp.Header.Get("Content-Type"); tc.typ != "" && got != tc.typ {
			t.Errorf("GET %s: got Content-Type %q, want %q", tc.path, got, tc.typ)
		}
	}
	for _, path := range []string{"/idem/package.json", "/idem/idem.test.js", "/idem/idemjs.go"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: got %d, want 404", path, resp.StatusCode)
		}
	}
}
