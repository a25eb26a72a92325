package checkout

import (
	"context"
	"fmt"
	"strings"

	"exactlyonce/internal/catalog"
)

// SoldOutError means the order asks for more of a product than is left
// (migration 00180): the claim that would have reserved it failed as a
// whole, so nothing was claimed, reserved or charged, and no payment was
// started. Short lists each product the order wants more of than is left.
type SoldOutError struct{ Short []ShortLine }

// ShortLine is a product an order wants more of than is left on hand.
type ShortLine struct {
	SKU, Name    string
	Wanted, Left int
}

func (e *SoldOutError) Error() string {
	if len(e.Short) == 0 {
		return "sold out"
	}
	return "sold out: " + e.Reasons()
}

// Reasons says what is short of each product, in words for the shopper.
func (e *SoldOutError) Reasons() string {
	parts := make([]string, 0, len(e.Short))
	for _, s := range e.Short {
		parts = append(parts, s.Reason())
	}
	return strings.Join(parts, "; ")
}

// Reason says what is short of one product in words for the shopper.
func (s ShortLine) Reason() string {
	if s.Left == 0 {
		return s.Name + " is sold out"
	}
	return fmt.Sprintf("only %d of %s left (the order asks for %d)", s.Left, s.Name, s.Wanted)
}

// soldOut reads what is left of the order's products after its claim was
// refused for want of stock, to tell the client which. The claim and this
// read are two moments: stock that came back in between leaves Short
// empty, and the client is still told the order was not placed.
func (e *Engine) soldOut(ctx context.Context, priced catalog.Priced) error {
	left, err := e.catalog.Left(ctx)
	if err != nil {
		return fmt.Errorf("read stock after a sold-out claim: %w", err)
	}
	out := &SoldOutError{}
	for _, l := range priced.Lines {
		if n, kept := left[l.SKU]; kept && n < l.Quantity {
			out.Short = append(out.Short, ShortLine{SKU: l.SKU, Name: l.Name, Wanted: l.Quantity, Left: n})
		}
	}
	return out
}
