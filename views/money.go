package views

import (
	"fmt"
	"strings"
)

// symbols are the currencies the shop shows with a sign; others show their
// ISO code.
var symbols = map[string]string{"eur": "€", "usd": "$", "gbp": "£"}

// Money is an amount in minor units of a currency, as a page shows it: the
// templates format it (String), so that a handler hands over what the
// order holds and never a string made of it.
type Money struct {
	Minor    int64
	Currency string
}

// String formats m, such as 1200 eur as "€12.00".
func (m Money) String() string { return FormatMoney(m.Minor, m.Currency) }

// FormatMoney formats an amount in minor units, such as 1200 eur as
// "€12.00". Amounts are integers all the way to here: no float ever holds
// money.
func FormatMoney(amount int64, currency string) string {
	sign := ""
	if amount < 0 {
		sign, amount = "-", -amount
	}
	digits := fmt.Sprintf("%d.%02d", amount/100, amount%100)
	if s, ok := symbols[strings.ToLower(currency)]; ok {
		return sign + s + digits
	}
	return sign + digits + " " + strings.ToUpper(currency)
}
