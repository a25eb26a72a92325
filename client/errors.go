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
