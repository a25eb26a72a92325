package views

import (
	"github.com/a-h/templ"

	"strconv"
	"strings"
	"time"
	"unicode"
)

// isoUTC is t as a <time> element's datetime: RFC 3339 in UTC, to the
// second.
func isoUTC(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// initials stands in for a product photo: "Espresso mug" → "EM".
func initials(name string) string {
	var b strings.Builder
	for _, w := range strings.Fields(name) {
		for _, r := range w {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				b.WriteRune(unicode.ToUpper(r))
				break
			}
		}
		if b.Len() >= 2 {
			break
		}
	}
	return b.String()
}

func itoa(n int) string { return strconv.Itoa(n) }

func amountValue(n int64) string { return strconv.FormatInt(n, 10) }

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }

// describedBy points a field at its error message, id, when it has one.
func describedBy(err, id string) templ.Attributes {
	if err == "" {
		return nil
	}
	return templ.Attributes{"aria-describedby": id}
}
