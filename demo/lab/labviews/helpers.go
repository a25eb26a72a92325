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

// markText and markLine place the label of the i-th mark on its own line
// of the marks' strip, and the top of its line just under the label.
func markText(i int) string { return strconv.FormatFloat(1.1+1.3*float64(i), 'f', 1, 64) + "em" }

func markLine(i int) string { return strconv.FormatFloat(1.35+1.3*float64(i), 'f', 2, 64) + "em" }

// markDX keeps a label off its line, on the side it is drawn.
func markDX(anchor string) string {
	if anchor == "end" {
		return "-0.35em"
	}
	return "0.35em"
}
