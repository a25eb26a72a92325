package views

import (
	"fmt"
	"strings"
)

// symbols are the currencies the shop shows with a sign; others show their
// ISO code.
var symbols = map[string]string{"eur": "€", "usd": "$", "gbp": "£"}

// Money formats an amount in minor units, such as 1200 eur as "€12.00".
// Amounts are integers all the way to here: no float ever holds money.
func Money(amount int64, currency string) string {
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
