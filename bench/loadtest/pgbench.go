package loadtest

import (
	"bufio"
	"bytes"
	"context"
	"embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Scripts are the pgbench scripts: neworder.sql (the shop's statements of
// one new order), seed.sql (the seed's five-round-trip shape), and
// pointselect.sql (a point select by primary key).
//
//go:embed pgbench/*.sql
var Scripts embed.FS

// Pgbench runs pgbench scripts against one server.
type Pgbench struct {
	// Env holds PGHOST, PGPORT, PGUSER, PGDATABASE (and nothing secret:
	// the local servers trust their clients).
	Env []string
	// Mode is pgbench's -M: prepared mirrors pgx's cache_statement,
	// extended its cache_describe (PgBouncer 1.18 cannot prepare).
	Mode string
	Dir  string // where the scripts and the per-transaction logs go
}

// Run runs script for opts.Duration (whole seconds, at least 1) from
// opts.Clients clients with the variables defs, and reads the rate and the
// latency percentiles from pgbench's per-transaction log.
func (p Pgbench) Run(ctx context.Context, name, script string, opts Options, defs map[string]string) (Result, error) {
	text, err := Scripts.ReadFile("pgbench/" + script)
	if err != nil {
		return Result{}, err
	}
	dir, err := os.MkdirTemp(p.Dir, "pgbench-")
	if err != nil {
		return Result{}, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, script)
	if err := os.WriteFile(path, text, 0o644); err != nil {
		return Result{}, err
	}
	secs := max(1, int(opts.Duration.Round(time.Second)/time.Second))
	args := []string{"-n", "-f", path, "-c", strconv.Itoa(opts.Clients), "-j", strconv.Itoa(min(opts.Clients, 4)),
		"-M", p.Mode, "-l", "--log-prefix", filepath.Join(dir, "log")}
	if opts.Max > 0 {
		args = append(args, "-t", strconv.Itoa(max(1, opts.Max/opts.Clients)))
	} else {
		args = append(args, "-T", strconv.Itoa(secs))
	}
	for k, v := range defs {
		args = append(args, "-D", k+"="+v)
	}
	cmd := exec.CommandContext(ctx, "pgbench", args...)
	cmd.Env = append(os.Environ(), p.Env...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return Result{}, fmt.Errorf("pgbench %s: %w\n%s", script, err, tail(out.String()))
	}
	r, err := parsePgbench(out.String())
	if err != nil {
		return Result{}, fmt.Errorf("pgbench %s: %w\n%s", script, err, tail(out.String()))
	}
	r.Name = name
	lat, err := readLogs(dir)
	if err != nil {
		return Result{}, err
	}
	r.P50, r.P99 = Percentiles(lat)
	return r, nil
}

var (
	tpsRe    = regexp.MustCompile(`tps = ([0-9.]+) \(without initial connection time\)`)
	doneRe   = regexp.MustCompile(`number of transactions actually processed: (\d+)`)
	failedRe = regexp.MustCompile(`number of failed transactions: (\d+)`)
)

// parsePgbench reads the transaction count and the rate from pgbench's
// summary; Elapsed is set so that Rate() gives pgbench's own tps.
func parsePgbench(out string) (Result, error) {
	m := tpsRe.FindStringSubmatch(out)
	d := doneRe.FindStringSubmatch(out)
	if m == nil || d == nil {
		return Result{}, fmt.Errorf("no tps in pgbench's output")
	}
	tps, _ := strconv.ParseFloat(m[1], 64)
	n, _ := strconv.Atoi(d[1])
	r := Result{N: n}
	if tps > 0 {
		r.Elapsed = time.Duration(float64(n) / tps * float64(time.Second))
	}
	if f := failedRe.FindStringSubmatch(out); f != nil {
		r.Errors, _ = strconv.Atoi(f[1])
	}
	return r, nil
}

// readLogs reads the latencies (third field, µs) of pgbench's
// per-transaction logs in dir.
func readLogs(dir string) ([]time.Duration, error) {
	files, err := filepath.Glob(filepath.Join(dir, "log.*"))
	if err != nil {
		return nil, err
	}
	var lat []time.Duration
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			fs := strings.Fields(sc.Text())
			if len(fs) < 3 {
				continue
			}
			us, err := strconv.ParseInt(fs[2], 10, 64)
			if err != nil {
				continue
			}
			lat = append(lat, time.Duration(us)*time.Microsecond)
		}
	}
	return lat, nil
}

func tail(s string) string {
	if len(s) > 1500 {
		return s[len(s)-1500:]
	}
	return s
}
