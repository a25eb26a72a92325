package idemhttp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"exactlyonce/idem"
	"exactlyonce/idem/idemhttp"
	"exactlyonce/idem/idemtest"
)

const testSecret = "a form secret of at least thirty-two bytes"

// visitorHeader names the visitor in these tests, so that a test can be two
// visitors at once.
func visitorHeader(_ http.ResponseWriter, r *http.Request) (string, error) {
	return r.Header.Get("X-Visitor"), nil
}

func newForm(t *testing.T, o idemhttp.FormOptions) *idemhttp.Form {
	t.Helper()
	o.FormOptions = idem.FormOptions{Store: idem.NewStore(idemtest.NewPool(t), idem.Options{}), Secret: []byte(testSecret)}
	if o.Visitor == nil {
		o.Visitor = visitorHeader
	}
	if o.StatusPath == "" {
		o.StatusPath = "/send/status"
	}
	f, err := idemhttp.NewForm(o)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// submitAs posts the form as visitor with key and the field amount.
func submitAs(t *testing.T, h http.HandlerFunc, visitor string, key idem.FormKey, amount string) *httptest.ResponseRecorder {
	t.Helper()
	body := url.Values{idem.KeyField: {key.Key}, idem.SigField: {key.Sig}, "amount": {amount}}.Encode()
	req := httptest.NewRequest(http.MethodPost, "/send", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Visitor", visitor)
	rec := httptest.NewRecorder()
	h(rec, req)
	return rec
}

// The visitor the form computed is handed to the work, in its lock: an
// application does not compute it twice.
func TestFormWorkGetsTheVisitor(t *testing.T) {
	form := newForm(t, idemhttp.FormOptions{})
	var got *idem.Lock
	h := func(w http.ResponseWriter, r *http.Request) {
		err := form.Submit(w, r, []string{r.PostFormValue("amount")}, func(ctx context.Context, _ pgx.Tx) (idem.Response, error) {
			got = idem.LockOf(ctx)
			return idem.Redirect("/sent"), nil
		})
		if err != nil {
			t.Error(err)
		}
	}
	rec := submitAs(t, h, "alice", form.Core().Mint("alice"), "5")
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("status %d, want 303", rec.Code)
	}
	if got == nil || got.Scope != "alice" {
		t.Fatalf("the work's lock %+v, want one whose Scope is the visitor alice", got)
	}
}
