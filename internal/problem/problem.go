// Package problem is the RFC 9457 "problem details" error body the JSON API
// answers with. It has its own package because the order flow stores some
// problems (a declined card) as the response a retry must replay, so the
// checkout engine and the HTTP handlers need the same shape.
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
	// ChargeID names the provider's record of a declined payment.
	ChargeID string `json:"charge_id,omitempty"`
}

// Kind is a class of problem: its type URI, title and status together, so a
// handler cannot pair a title with the wrong status.
type Kind struct {
	Slug   string
	Title  string
	Status int
	// About explains the problem to a developer reading /problems/{slug}.
	About string
}

// New returns a problem of this kind with a request-specific detail.
func (k Kind) New(detail string) Problem {
	return Problem{Type: "/problems/" + k.Slug, Title: k.Title, Status: k.Status, Detail: detail}
}

// JSON encodes p. Encoding a struct of strings and an int cannot fail.
func (p Problem) JSON() json.RawMessage {
	b, _ := json.Marshal(p)
	return b
}
