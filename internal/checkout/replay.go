package checkout

import (
	"errors"

	"exactlyonce/internal/catalog"
)

// priceError is the answer to an order that cannot be priced.
func priceError(err error) error {
	var invalid *catalog.InvalidCartError
	if errors.As(err, &invalid) {
		return &InvalidOrderError{Reason: invalid.Reason}
	}
	return err
}
