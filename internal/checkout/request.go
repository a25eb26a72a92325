package checkout

import (
	"encoding/json"
	"fmt"

	"exactlyonce/internal/catalog"
)

// storedRequest is what a claim stores with the key so that the completer
// can write the order if the attempt dies after charging: the priced lines,
// not the cart, because the order must say what was charged even if prices
// change before the completer runs. The card number is not part of it.
type storedRequest struct {
	Lines    []catalog.Line `json:"lines"`
	Amount   int64          `json:"amount"`
	Currency string         `json:"currency"`
}

func encodeRequest(p catalog.Priced) (json.RawMessage, error) {
	b, err := json.Marshal(storedRequest{Lines: p.Lines, Amount: p.Amount, Currency: p.Currency})
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	return b, nil
}

func decodeRequest(b json.RawMessage) (catalog.Priced, error) {
	var r storedRequest
	if err := json.Unmarshal(b, &r); err != nil {
		return catalog.Priced{}, fmt.Errorf("decode stored request: %w", err)
	}
	return catalog.Priced{Lines: r.Lines, Amount: r.Amount, Currency: r.Currency}, nil
}
