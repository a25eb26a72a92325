package views

import (
	"context"
	"strings"
)

// Chrome is what the frame of every page shows besides the page: how many
// things the cart holds (on the Cart link) and whether the lab is on (a
// link to it). The page middleware puts one in the request's context and
// the handlers that read the cart fill in its count, so that no page's
// view model has to carry the frame's state.
type Chrome struct {
	CartCount int
	Lab       bool
}

type chromeKey struct{}

// WithChrome returns ctx carrying c, which the layout reads.
func WithChrome(ctx context.Context, c *Chrome) context.Context {
	return context.WithValue(ctx, chromeKey{}, c)
}

// ChromeOf is the frame state ctx carries, if any.
func ChromeOf(ctx context.Context) (*Chrome, bool) {
	c, ok := ctx.Value(chromeKey{}).(*Chrome)
	return c, ok
}

func chrome(ctx context.Context) Chrome {
	if c, ok := ChromeOf(ctx); ok {
		return *c
	}
	return Chrome{}
}

// OrderNumber is the short form of an order id a shopper reads: the last
// eight hex digits, upper case ("#3F9A0C12"). The ids are UUIDv7, whose
// first digits are the time and the same for orders placed close together;
// the last are random, so two orders of one shopper do not share them in
// practice. Links and the data-order-id attributes keep the whole id.
func OrderNumber(id string) string {
	hex := strings.ReplaceAll(id, "-", "")
	return "#" + strings.ToUpper(hex[max(0, len(hex)-8):])
}

// cartLabel is the Cart link's accessible name, with the count the badge
// shows.
func cartLabel(n int) string {
	if n == 1 {
		return "Cart, 1 item"
	}
	return "Cart, " + itoa(n) + " items"
}
