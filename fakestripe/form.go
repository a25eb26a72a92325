package fakestripe

import (
	"crypto/sha256"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"
)

// maxBodyBytes bounds a request body; the shop's are a few hundred bytes.
const maxBodyBytes = 64 << 10

// readForm reads a form-encoded body, as Stripe's API takes its parameters
// (the SDK's form encoding: metadata[k]=v, payment_method_types[0]=card).
// GET requests carry theirs in the query.
func readForm(c echo.Context) (url.Values, error) {
	r := c.Request()
	if r.Method == http.MethodGet {
		return r.URL.Query(), nil
	}
	b, err := io.ReadAll(http.MaxBytesReader(c.Response(), r.Body, maxBodyBytes))
	if err != nil {
		return nil, invalidRequest("", "", "The request body could not be read.")
	}
	form, err := url.ParseQuery(string(b))
	if err != nil {
		return nil, invalidRequest("", "", "The request body is not form-encoded.")
	}
	return form, nil
}

// params is a request's parameters, checked against the names an endpoint
// knows: Stripe refuses an unknown parameter rather than ignore it.
type params struct {
	form url.Values
}

// checkParams refuses a parameter outside known, where a name ending in
// "[" stands for every parameter of that hash or array (metadata[…]).
func checkParams(form url.Values, known ...string) (params, error) {
	for name := range form {
		ok := slices.ContainsFunc(known, func(k string) bool {
			return name == k || strings.HasSuffix(k, "[") && strings.HasPrefix(name, k)
		})
		if !ok {
			return params{}, invalidRequest("parameter_unknown", name, "Received unknown parameter: "+name)
		}
	}
	return params{form: form}, nil
}

func (p params) str(name string) string { return p.form.Get(name) }

// returnURL is the return_url parameter, "" when there is none: an
// absolute http(s) URL, as Stripe requires.
func (p params) returnURL() (string, error) {
	raw := p.str("return_url")
	if raw == "" {
		return "", nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || len(raw) > 2048 {
		return "", invalidRequest("url_invalid", "return_url", "Not a valid URL: return_url must be an absolute http or https URL.")
	}
	return raw, nil
}

// int returns an integer parameter, or ok false when it is absent.
func (p params) int(name string) (v int64, ok bool, err error) {
	s := p.form.Get(name)
	if s == "" {
		return 0, false, nil
	}
	v, err = strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, false, invalidRequest("parameter_invalid_integer", name, "Invalid integer: "+s)
	}
	return v, true, nil
}

func (p params) bool(name string) (bool, error) {
	switch p.form.Get(name) {
	case "", "false":
		return false, nil
	case "true":
		return true, nil
	}
	return false, invalidRequest("parameter_invalid_boolean", name, "Invalid boolean: "+p.form.Get(name))
}

// hash returns metadata[k]=v as a map.
func (p params) hash(prefix string) map[string]string {
	out := map[string]string{}
	for name, v := range p.form {
		if k, ok := strings.CutPrefix(name, prefix+"["); ok && strings.HasSuffix(k, "]") && len(v) > 0 {
			out[strings.TrimSuffix(k, "]")] = v[0]
		}
	}
	return out
}

// requestHash fingerprints a request for the idempotency check: the same
// key with another method, path or parameter is refused.
func requestHash(r *http.Request, form url.Values) []byte {
	h := sha256.New()
	h.Write([]byte(r.Method + " " + r.URL.Path + "\n"))
	h.Write([]byte(form.Encode())) // Encode sorts by name
	return h.Sum(nil)
}
