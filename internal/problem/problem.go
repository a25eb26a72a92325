// Package problem is the shop's error vocabulary: one table (kinds.go) from
// each error code to its RFC 9457 problem type, title and status for the
// JSON API and to the copy of the HTML page a shopper sees instead. It has
// its own package because the order flow stores some problems (a declined
// card) as the response a retry must replay, so the checkout engine and the
// HTTP handlers need the same shape; and because the API and the pages must
// not drift apart, both read their words from here.
package problem

import "encoding/json"

// ContentType is the media type of a problem body.
const ContentType = "application/problem+json"

// Problem is one error answer. Type is a relative URI under /problems/ that
// the server documents; clients branch on it rather than on Title or Detail.
type Problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail,omitempty"`
	// Instance names this occurrence of the problem: urn:trace:<trace id>,
	// the trace that answered it (tracing.Instance), which the logs and the
	// admin listener's /traces page know by the same id. Empty when tracing
	// is off.
	Instance string `json:"instance,omitempty"`
	// ChargeID names the provider's record of a declined payment, or of
	// one the request's own attempt found not charged and canceled (or
	// charged for another amount and refunded): a payment-not-completed
	// with a charge_id is that request's verdict, not the completer's on
	// an interrupted request.
	ChargeID string `json:"charge_id,omitempty"`
	// DeclineCode is the card issuer's reason for a decline, as Stripe
	// names it (insufficient_funds, generic_decline, …): what a client
	// shows or branches on, where the detail is words for a person.
	DeclineCode string `json:"decline_code,omitempty"`
	// Errors lists what is wrong with the request's body, each at its
	// place, in the shape RFC 9457's own example gives (section 3): a client
	// can put each message beside the field it is about.
	Errors []FieldError `json:"errors,omitempty"`
	// Left is what is left to refund of an order (refund-exceeds-charge),
	// in minor units.
	Left *int64 `json:"left,omitempty"`
}

// FieldError is one thing wrong with a request body: Pointer is a JSON
// Pointer (RFC 6901) into the body as a URI fragment ("#/items/0/sku"),
// "#" for the body as a whole.
type FieldError struct {
	Detail  string `json:"detail"`
	Pointer string `json:"pointer"`
}

// At is the FieldError at pointer, a JSON Pointer ("/items/0/sku", "" for
// the whole body).
func At(pointer, detail string) []FieldError {
	return []FieldError{{Detail: detail, Pointer: "#" + pointer}}
}

// Kind is one error code of the table: its type URI, title and status
// together, so a handler cannot pair a title with the wrong status, and the
// page a person is shown for it, so a page cannot say something the API
// does not.
type Kind struct {
	Slug   string
	Title  string
	Status int
	// About explains the problem to a developer reading /problems/{slug}.
	About string
	// Page is what a shopper reads when a page route meets this error.
	Page Page
}

// Page is the copy of an HTML error page: a heading, one sentence, and the
// way on from there.
type Page struct {
	Heading string
	Message string
	Next    Link
}

// Link is the one action an error page offers.
type Link struct{ Href, Label string }

// The ways on from an error page. ToCheckout renders a fresh form, and so
// mints a new key: the way out of every refusal that is final for the old
// one.
var (
	ToShop     = Link{Href: "/", Label: "Go to the shop"}
	ToCart     = Link{Href: "/cart", Label: "Back to your cart"}
	ToCheckout = Link{Href: "/checkout", Label: "Start a new checkout"}
	ToPickup   = Link{Href: "/pickup", Label: "Open the pickup form again"}
	ToOrders   = Link{Href: "/orders", Label: "Back to your orders"}
)

// Type is the kind's type URI, relative to the server.
func (k Kind) Type() string { return "/problems/" + k.Slug }

// New returns a problem of this kind with a request-specific detail.
func (k Kind) New(detail string) Problem {
	return Problem{Type: k.Type(), Title: k.Title, Status: k.Status, Detail: detail}
}

// JSON encodes p. Encoding strings, an int and slices of strings cannot fail.
func (p Problem) JSON() json.RawMessage {
	b, _ := json.Marshal(p)
	return b
}
