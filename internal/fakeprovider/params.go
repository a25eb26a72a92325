package fakeprovider

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"
)

const (
	maxBodyBytes       = 64 << 10
	maxKeyLength       = 255 // as Stripe
	maxDescriptionRune = 1000
)

var errBodyInvalid = invalidRequest("body_invalid", "", "The request body is not a valid JSON object of known parameters.")

// chargeParams are the validated parameters of a create-charge call. card
// holds the full number only for as long as the request is processed: it is
// never stored, logged nor echoed in an error.
type chargeParams struct {
	amount      int64
	currency    string
	card        string // digits only
	description string
}

func (cp chargeParams) last4() string { return cp.card[len(cp.card)-4:] }

// hash fingerprints the parameters so that a key reused with other ones is
// refused. It covers the card's last four digits, not the whole number: a
// digest of a card number is as good as the number (the unknown middle digits
// are few enough to enumerate), so storing one would break the rule of never
// storing the number. The cost is that a reuse of a key with another card of
// the same last four digits goes unnoticed.
func (cp chargeParams) hash() []byte {
	canonical, err := json.Marshal(struct {
		Amount      int64  `json:"amount"`
		Currency    string `json:"currency"`
		CardLast4   string `json:"card_last4"`
		Description string `json:"description"`
	}{cp.amount, cp.currency, cp.last4(), cp.description})
	if err != nil {
		panic("marshal charge params: " + err.Error()) // strings and an int always marshal
	}
	sum := sha256.Sum256(canonical)
	return sum[:]
}

// readChargeParams decodes and validates the body of a create-charge call.
// Its error messages name fields but never quote values, since a value may be
// a card number.
func readChargeParams(c echo.Context) (chargeParams, error) {
	var body struct {
		Amount      int64  `json:"amount"`
		Currency    string `json:"currency"`
		Card        string `json:"card"`
		Description string `json:"description"`
	}
	dec := json.NewDecoder(http.MaxBytesReader(c.Response(), c.Request().Body, maxBodyBytes))
	// A misspelt optional field would otherwise be dropped without a word.
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		var typeErr *json.UnmarshalTypeError
		var tooLarge *http.MaxBytesError
		switch {
		case errors.As(err, &typeErr):
			return chargeParams{}, invalidRequest("parameter_invalid", typeErr.Field,
				"Parameter "+typeErr.Field+" has the wrong type.")
		case errors.As(err, &tooLarge):
			return chargeParams{}, invalidRequest("body_too_large", "", "The request body is too large.")
		default:
			return chargeParams{}, errBodyInvalid
		}
	}
	// Reading on to the end refuses trailing data and, as important, lets
	// net/http see the body's end: only then does it watch the connection and
	// cancel the request's context when the client hangs up, which the
	// timeout fault waits for.
	if _, err := dec.Token(); err != io.EOF {
		return chargeParams{}, errBodyInvalid
	}

	if body.Amount <= 0 {
		return chargeParams{}, invalidRequest("parameter_invalid", "amount",
			"Amount must be a positive integer in the currency's smallest unit.")
	}
	if !isCurrency(body.Currency) {
		return chargeParams{}, invalidRequest("parameter_invalid", "currency",
			"Currency must be a three-letter ISO code in lower case.")
	}
	card := strings.ReplaceAll(body.Card, " ", "")
	if !isCardNumber(card) {
		return chargeParams{}, invalidRequest("parameter_invalid", "card",
			"Card must be a number of 12 to 19 digits.")
	}
	// Postgres text cannot hold a NUL; refusing it here keeps it a 400.
	if utf8.RuneCountInString(body.Description) > maxDescriptionRune || strings.ContainsRune(body.Description, 0) {
		return chargeParams{}, invalidRequest("parameter_invalid", "description",
			"Description must be at most 1000 characters, none of them NUL.")
	}
	return chargeParams{amount: body.Amount, currency: body.Currency, card: card, description: body.Description}, nil
}

func isCurrency(s string) bool {
	if len(s) != 3 {
		return false
	}
	for _, r := range s {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return true
}

func isCardNumber(s string) bool {
	if len(s) < 12 || len(s) > 19 {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
