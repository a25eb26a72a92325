package labviews

import "strconv"

func count(n int64) string { return strconv.FormatInt(n, 10) }

func itoa(n int) string { return strconv.Itoa(n) }

// plural picks the noun for n; while a run is in flight the count is not
// known yet, and the plural reads best next to an ellipsis.
func plural(n int64, one, many string, unknown bool) string {
	if n == 1 && !unknown {
		return one
	}
	return many
}
