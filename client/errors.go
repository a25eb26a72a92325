package client

import (
	"errors"
	"fmt"
)

// Problem is an RFC 9457 error answer that no retry changes (a 4xx other
// than 409 and 429, or a final 402 such as a declined card), or the last
// retryable one when retrying stopped.
type Problem struct {
	Status int    `json:"status"`
	Type   string `json:"type"`
	Title  string `json:"title"`
	Detail string `json:"detail"`
}

func (p *Problem) Error() string {
	return fmt.Sprintf("%d %s: %s", p.Status, p.Title, p.Detail)
}

// ErrUnsettled means retrying stopped and the server could not say how
// the operation ended. The key stays in the store: calling again later
// resumes the same operation while the window allows, and nothing was
// guessed. Errors wrap it with the reason.
var ErrUnsettled = errors.New("operation not settled")

// ActionRequiredError is an order whose payment the card holder must
// authenticate with their bank first (3-D Secure; 202 requires_action): it
// is neither placed nor refused, and nothing is stored for its key. Send
// the card holder to URL; their bank sends them back to the order's
// ReturnURL. Then call PlaceOrder again with the same operation: it sends
// the same key and gets this error again while they have not
// authenticated, then the order, or a final *Problem (402) if the
// authentication failed or was abandoned.
type ActionRequiredError struct {
	// URL is the bank's page; PaymentIntent the provider's intent.
	URL, PaymentIntent string
}

func (e *ActionRequiredError) Error() string {
	return "the card holder must authenticate the payment with their bank first: send them to " + e.URL
}
