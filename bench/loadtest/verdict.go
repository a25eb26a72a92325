package loadtest

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// Verdict is what one run says of one target: what was measured, whether
// that meets it, and for a target missed, the measured reason and the next
// step. The table gives the numbers; the verdicts say what they mean.
type Verdict struct {
	Target   string
	Measured string
	Met      bool
	Why      string // the reason and the next step, for a target missed
}

// PrintVerdicts writes the verdicts as a Markdown list under the table.
func PrintVerdicts(w io.Writer, vs []Verdict) error {
	if _, err := fmt.Fprintln(w, "\nTargets:"); err != nil {
		return err
	}
	for _, v := range vs {
		mark := "met"
		if !v.Met {
			mark = "NOT MET"
		}
		line := fmt.Sprintf("- %s: %s — %s", v.Target, v.Measured, mark)
		if !v.Met && v.Why != "" {
			line += ". " + v.Why
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	return nil
}

// Statements counts the statements of an embedded pgbench script, each a
// round trip: what ends with a semicolon outside comments and string
// literals. Meta-commands (\set) run in pgbench and are not counted. The
// statements between \if :fakedb and \endif, the fake Stripe's, count only
// with fakeDB, as pgbench runs them only with -D fakedb=1.
func Statements(script string, fakeDB bool) (int, error) {
	b, err := Scripts.ReadFile("pgbench/" + script)
	if err != nil {
		return 0, err
	}
	n := 0
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	inString, skip := false, false
	for sc.Scan() {
		line := sc.Text()
		switch trimmed := strings.TrimSpace(line); {
		case inString:
		case trimmed == `\if :fakedb`:
			skip = !fakeDB
			continue
		case trimmed == `\endif`:
			skip = false
			continue
		case strings.HasPrefix(trimmed, `\`) || strings.HasPrefix(trimmed, "--"):
			continue
		}
		if skip {
			continue
		}
		for i := 0; i < len(line); i++ {
			switch c := line[i]; {
			case c == '\'':
				inString = !inString
			case inString:
			case c == '-' && i+1 < len(line) && line[i+1] == '-':
				i = len(line) // a comment to the end of the line
			case c == ';':
				n++
			}
		}
	}
	return n, sc.Err()
}
