package idemcheck

import "testing"

func TestPointerResolvesRFC6901(t *testing.T) {
	doc := []byte(`{"id":"o1","a/b":{"m~n":[10,{"x":true}]},"n":12}`)
	for ptr, want := range map[string]string{
		"/id":            "o1",
		"/a~1b/m~0n/0":   "10",
		"/a~1b/m~0n/1/x": "true",
		"/n":             "12",
	} {
		got, err := pointer(doc, ptr)
		if err != nil {
			t.Errorf("%s: %v", ptr, err)
			continue
		}
		if s := fmtValue(got); s != want {
			t.Errorf("%s: got %s, want %s", ptr, s, want)
		}
	}
	for _, ptr := range []string{"id", "/missing", "/a~1b/m~0n/2", "/id/x"} {
		if _, err := pointer(doc, ptr); err == nil {
			t.Errorf("%s: got no error, want one", ptr)
		}
	}
}
