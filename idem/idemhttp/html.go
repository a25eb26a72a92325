package idemhttp

import (
	"context"
	"html"
	"io"

	"exactlyonce/idem"
)

// Component is a piece of HTML. It has the shape of templ.Component, so the
// kit's components go straight into a templ template (@idemhttp.HiddenFields(key))
// and a templ layout can frame them (FormOptions.Layout), with no templ code
// generated in the kit.
type Component interface {
	Render(ctx context.Context, w io.Writer) error
}

// componentFunc is a function as a Component.
type componentFunc func(ctx context.Context, w io.Writer) error

// Render calls f.
func (f componentFunc) Render(ctx context.Context, w io.Writer) error { return f(ctx, w) }

// HiddenFields renders the key a form carries; put it inside the <form>.
func HiddenFields(k idem.FormKey) Component {
	return componentFunc(func(_ context.Context, w io.Writer) error {
		_, err := io.WriteString(w, `<input type="hidden" name="`+idem.KeyField+`" value="`+html.EscapeString(k.Key)+
			`" data-testid="idempotency-key"><input type="hidden" name="`+idem.SigField+`" value="`+html.EscapeString(k.Sig)+`">`)
		return err
	})
}

// processingTitle is the title of the page Processing is the body of.
const processingTitle = "Still working on it"

// Processing tells the visitor their submission is still being worked on
// (the body of a page titled "Still working on it"). Status sends it with a
// Refresh header, so the browser asks again every second without a script,
// and follows the redirect to the result.
func Processing(statusURL string) Component {
	return componentFunc(func(_ context.Context, w io.Writer) error {
		_, err := io.WriteString(w, `<section data-testid="processing" aria-live="polite">`+
			`<p>Your submission arrived and is being processed. This page checks again every second; there is no need to submit the form again.</p>`+
			`<p><a href="`+html.EscapeString(statusURL)+`">Check now</a></p></section>`)
		return err
	})
}
