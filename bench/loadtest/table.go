package loadtest

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// Row is one line of the table: a result and, for the app's legs, the
// pgbench baseline it is compared with (nil for a baseline itself).
type Row struct {
	Result   Result
	Baseline *Result
	Target   string // e.g. "≥ 0.6×"; empty when none
	// Alone marks an app leg with no baseline to compare with (the
	// checkout page); a row without Baseline is otherwise a baseline.
	Alone bool
}

// Ratio is the row's rate over its baseline's, or 0 without one.
func (r Row) Ratio() float64 {
	if r.Baseline == nil || r.Baseline.Rate() == 0 {
		return 0
	}
	return r.Result.Rate() / r.Baseline.Rate()
}

// PrintTable writes the rows as a Markdown table, the form docs/performance.md
// keeps them in.
func PrintTable(w io.Writer, rows []Row) error {
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', tabwriter.Debug)
	fmt.Fprintln(tw, "| work\t rate/s\t ratio\t target\t p50\t p99\t web CPU/req\t provider CPU/req\t errors\t")
	fmt.Fprintln(tw, "|---\t---:\t---:\t---\t---:\t---:\t---:\t---:\t---:\t")
	for _, r := range rows {
		ratio := "1 (baseline)"
		if r.Alone {
			ratio = "—"
		}
		if r.Baseline != nil {
			ratio = fmt.Sprintf("%.2f× %s", r.Ratio(), r.Baseline.Name)
		}
		cpu := "—"
		if c := r.Result.CPUPerRequest(); c > 0 {
			cpu = FormatDuration(c)
		}
		providerCPU := "—"
		if c := r.Result.ProviderCPUPerRequest(); c > 0 {
			providerCPU = FormatDuration(c)
		}
		target := r.Target
		if target == "" {
			target = "—"
		}
		fmt.Fprintf(tw, "| %s\t %.0f\t %s\t %s\t %s\t %s\t %s\t %s\t %d\t\n", r.Result.Name, r.Result.Rate(), ratio, target,
			FormatDuration(r.Result.P50), FormatDuration(r.Result.P99), cpu, providerCPU, r.Result.Errors)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return nil
}

// TableString is PrintTable into a string.
func TableString(rows []Row) string {
	var b strings.Builder
	_ = PrintTable(&b, rows)
	return b.String()
}

// FormatDuration writes a latency or a CPU time as the table does: µs,
// ms with two decimals, or s.
func FormatDuration(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2f s", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%d µs", d.Microseconds())
	}
}
