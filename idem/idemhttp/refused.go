package idemhttp

import (
	"context"
	"errors"
	"html"
	"io"
	"math"
	"net/http"
	"strconv"

	"exactlyonce/idem"
)

// WriteError answers one of the kit's refusals of a submit (a key reused
// with other values, a form too old or not minted for this visitor, a
// submit still running, an outage) as a page in the form's layout (Layout),
// with its status and words for the visitor rather than for an API client.
// It reports false, and writes nothing, for any other error: the
// application's own (the work's, the Visitor's), which its error handler
// answers.
func (f *Form) WriteError(w http.ResponseWriter, r *http.Request, err error) bool {
	ref, ok := idem.RefusalOf(err)
	if !ok {
		return false
	}
	if ref.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(ref.RetryAfter.Seconds()))))
	}
	title, text := visitorWords(err, ref)
	f.page(w, r, ref.Status, title, refused(text, f.o.StartOver))
	return true
}

// visitorWords says what a refusal means to the person who submitted the
// form: idem.RefusalOf's words are for an API client (headers, keys).
func visitorWords(err error, ref idem.Refusal) (title, text string) {
	var scope *idem.ScopeError
	switch {
	case errors.As(err, &scope):
		return ref.Title, ref.Detail
	case errors.Is(err, idem.ErrMismatch):
		return "This form was already sent", "This form was already sent with other values, and that first submission stands. To send something else, start over with a new form."
	case errors.Is(err, idem.ErrFormKeyExpired):
		return "This form has expired", "The form was open too long to be sent. Start over with a new form."
	case errors.Is(err, idem.ErrFormKeyMissing), errors.Is(err, idem.ErrFormKeyForeign):
		return "This form cannot be sent", "This copy of the form was not made for you, or has changed since it was shown. Start over with a new form."
	case errors.Is(err, idem.ErrInProgress), errors.Is(err, idem.ErrLockLost):
		return "Still working on it", "Your submission is still being processed. Wait a moment and reload this page; there is no need to fill in the form again."
	case errors.Is(err, idem.ErrNotFound):
		return "Nothing was sent", "Your submission did not go through and nothing was saved. Start over with a new form."
	case errors.Is(err, idem.ErrUnavailable), errors.Is(err, idem.ErrNotCommitted):
		return "Not saved yet", "We could not save your submission just now. Wait a moment and send the form again; it will not be sent twice."
	}
	return "Something went wrong", "Your submission could not be processed. Wait a moment and send the form again; it will not be sent twice."
}

// refused is the body of the page WriteError renders (its title is what
// happened): what to do, and a way back to the form.
func refused(text, startOver string) Component {
	return componentFunc(func(_ context.Context, w io.Writer) error {
		_, err := io.WriteString(w, `<section data-testid="refused" role="alert">`+
			`<p>`+html.EscapeString(text)+`</p><p><a href="`+html.EscapeString(startOver)+`">Start over</a></p></section>`)
		return err
	})
}
