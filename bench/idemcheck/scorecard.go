package idemcheck

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Outcome is what became of one scenario.
type Outcome string

const (
	Passed  Outcome = "pass"
	Failed  Outcome = "fail"
	Skipped Outcome = "skip"
)

// Result is one scenario's line of the scorecard.
type Result struct {
	ID      string  `json:"id"`
	Title   string  `json:"title"`
	Level   Level   `json:"level"`
	Outcome Outcome `json:"outcome"`
	// Detail says what was seen, so a failure can be acted on.
	Detail string `json:"detail"`
}

// Scorecard is the outcome of a run.
type Scorecard struct {
	Profile string   `json:"profile"`
	About   string   `json:"about"`
	Target  string   `json:"target"`
	Results []Result `json:"results"`
}

// OK reports whether no MUST failed: the run's exit status.
func (s *Scorecard) OK() bool {
	return len(s.FailedMusts()) == 0
}

// FailedMusts lists the ids of the failed MUST scenarios.
func (s *Scorecard) FailedMusts() []string {
	var ids []string
	for _, r := range s.Results {
		if r.Outcome == Failed && r.Level == Must {
			ids = append(ids, r.ID)
		}
	}
	return ids
}

// Failed lists the ids of every failed scenario, whatever its level.
func (s *Scorecard) Failed() []string {
	var ids []string
	for _, r := range s.Results {
		if r.Outcome == Failed {
			ids = append(ids, r.ID)
		}
	}
	return ids
}

func (s *Scorecard) summary() string {
	n := map[Outcome]int{}
	for _, r := range s.Results {
		n[r.Outcome]++
	}
	verdict := "PASS"
	if !s.OK() {
		verdict = fmt.Sprintf("FAIL (%d MUST failed)", len(s.FailedMusts()))
	}
	return fmt.Sprintf("%s: %d passed, %d failed, %d skipped", verdict, n[Passed], n[Failed], n[Skipped])
}

// WriteText writes the scorecard for a terminal.
func (s *Scorecard) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "idemcheck %s — profile %s\n%s\n\n", s.Target, s.Profile, s.About)
	for _, r := range s.Results {
		fmt.Fprintf(&b, "%-4s  %-6s  %-28s  %s\n", strings.ToUpper(string(r.Outcome)), r.Level, r.ID, r.Title)
		if r.Detail != "" {
			fmt.Fprintf(&b, "      %s\n", r.Detail)
		}
	}
	fmt.Fprintf(&b, "\n%s\n", s.summary())
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteMarkdown writes the scorecard as a Markdown table, for a pull
// request or a wiki.
func (s *Scorecard) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "## idemcheck: `%s`, profile `%s`\n\n%s\n\n", s.Target, s.Profile, s.About)
	b.WriteString("| Outcome | Level | Scenario | Detail |\n|---|---|---|---|\n")
	esc := strings.NewReplacer("|", `\|`, "\n", " ")
	for _, r := range s.Results {
		fmt.Fprintf(&b, "| %s | %s | %s (`%s`) | %s |\n", r.Outcome, r.Level, esc.Replace(r.Title), r.ID, esc.Replace(r.Detail))
	}
	fmt.Fprintf(&b, "\n**%s**\n", s.summary())
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteJSON writes the scorecard as JSON, with "ok" for scripts.
func (s *Scorecard) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		*Scorecard
		OK bool `json:"ok"`
	}{s, s.OK()})
}
