package chaos

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ClockSkew sets one shop's wall clock off from the machine's, the
// database's: Offset from its start, and DriftPerMinute more for each
// minute it runs. Only a shop built with the skewed runtime
// (bench/chaos/skewclock, make bin/web-skew) obeys it: libfaketime does
// not reach a Go binary (docs/analysis.md), so the skew is read by the
// runtime itself from the environment. A shop killed and started again
// starts its drift again from the offset.
type ClockSkew struct {
	Offset, DriftPerMinute time.Duration
}

func (s ClockSkew) String() string {
	if s.DriftPerMinute == 0 {
		return signed(s.Offset)
	}
	return signed(s.Offset) + "/" + signed(s.DriftPerMinute)
}

func signed(d time.Duration) string {
	if d >= 0 {
		return "+" + d.String()
	}
	return d.String()
}

// ParseClockSkews reads -clock-skew: one OFFSET[/DRIFT] per shop, comma
// separated, each a signed Go duration, DRIFT gained per minute: "-5m,+3m,
// +90s/+30s" starts the first shop five minutes behind, the second three
// ahead, and the third 90 s ahead and gaining 30 s a minute. Shops past
// the last take the list again from its start.
func ParseClockSkews(s string) ([]ClockSkew, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var skews []ClockSkew
	for part := range strings.SplitSeq(strings.ReplaceAll(s, "−", "-"), ",") {
		offset, drift, _ := strings.Cut(strings.TrimSpace(part), "/")
		var (
			sk  ClockSkew
			err error
		)
		if sk.Offset, err = time.ParseDuration(offset); err != nil {
			return nil, fmt.Errorf("clock skew %q: %w", part, err)
		}
		if drift != "" {
			if sk.DriftPerMinute, err = time.ParseDuration(drift); err != nil {
				return nil, fmt.Errorf("clock skew %q: drift: %w", part, err)
			}
			if sk.DriftPerMinute <= -time.Minute {
				return nil, fmt.Errorf("clock skew %q: a clock losing a minute a minute or more runs backwards", part)
			}
		}
		skews = append(skews, sk)
	}
	return skews, nil
}

// clockSkew is shop i's skew, if the run skews clocks.
func (c Config) clockSkew(i int) (ClockSkew, bool) {
	if len(c.ClockSkews) == 0 {
		return ClockSkew{}, false
	}
	return c.ClockSkews[i%len(c.ClockSkews)], true
}

// skewEnv is what the skewed runtime of shop i reads
// (skewclock/timeasm.go.skew): nothing for a run that skews no clock.
func (c Config) skewEnv(i int) []string {
	s, ok := c.clockSkew(i)
	if !ok {
		return nil
	}
	return []string{
		"CHAOS_CLOCK_OFFSET_NS=" + strconv.FormatInt(s.Offset.Nanoseconds(), 10),
		"CHAOS_CLOCK_DRIFT_NS_PER_MIN=" + strconv.FormatInt(s.DriftPerMinute.Nanoseconds(), 10),
	}
}

// ClockReport is one shop's clock as the harness read it from outside:
// the Date header of its answers, less the harness's own clock (the
// machine's, which the database's is too), when it was ready and at the
// end of the run. Date has whole seconds, so each reading is up to a
// second short.
type ClockReport struct {
	Shop       string  `json:"shop"`
	Asked      string  `json:"asked"`
	AtStart    float64 `json:"at_start_seconds"`
	AtEnd      float64 `json:"at_end_seconds"`
	RanMinutes float64 `json:"ran_minutes"`
}

// readClock asks a shop for any page and returns how far its Date header
// is from the harness's clock: the shop's wall clock, as any client of it
// can see it.
func readClock(ctx context.Context, addr string) (time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/readyz", nil)
	if err != nil {
		return 0, err
	}
	sent := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	back := time.Now()
	date, err := http.ParseTime(resp.Header.Get("Date"))
	if err != nil {
		return 0, fmt.Errorf("the Date header: %w", err)
	}
	// The shop read its clock between sent and back: the middle, at a
	// whole second's truncation at most.
	return date.Sub(sent.Add(back.Sub(sent) / 2)), nil
}

// checkClocks reads each skewed shop's clock once it is ready and refuses
// a run whose shops do not show the skew they were asked for: a shop
// built without the skewed runtime would otherwise pass a skewed run
// without ever having been skewed. since is when the shops were started,
// to bound the drift they may have gained meanwhile.
func (cl *cluster) checkClocks(ctx context.Context, since time.Time, logf func(string, ...any)) ([]ClockReport, error) {
	var reports []ClockReport
	for i, p := range cl.shops {
		sk, ok := cl.cfg.clockSkew(i)
		if !ok {
			continue
		}
		got, err := readClock(ctx, p.addr)
		if err != nil {
			return nil, fmt.Errorf("%s's clock: %w", p.name, err)
		}
		ran := time.Since(since)
		drift := time.Duration(float64(sk.DriftPerMinute) * ran.Minutes())
		// Up to a second short (Date's truncation), and the drift gained
		// since start, either way.
		slack := 1500*time.Millisecond + drift.Abs()
		if (got - sk.Offset).Abs() > slack {
			return nil, fmt.Errorf("%s's clock is %s off the machine's, asked for %s: a shop built without the skewed runtime (make bin/web-skew)?",
				p.name, signed(got.Round(time.Second)), sk)
		}
		logf("%s's clock: %s off the machine's and the database's (asked %s)", p.name, signed(got.Round(100*time.Millisecond)), sk)
		reports = append(reports, ClockReport{Shop: p.name, Asked: sk.String(), AtStart: got.Seconds()})
	}
	return reports, nil
}

// endClocks reads each skewed shop's clock again at the end of the run,
// to show the drift (a shop restarted after a kill -9 drifted from its
// restart).
func (cl *cluster) endClocks(ctx context.Context, reports []ClockReport, since time.Time, logf func(string, ...any)) {
	for i := range reports {
		for _, p := range cl.shops {
			if p.name != reports[i].Shop {
				continue
			}
			got, err := readClock(ctx, p.addr)
			if err != nil {
				logf("%s's clock at the end: %v", p.name, err)
				continue
			}
			reports[i].AtEnd, reports[i].RanMinutes = got.Seconds(), time.Since(since).Minutes()
			logf("%s's clock at the end: %s off the machine's (asked %s)", p.name, signed(got.Round(100*time.Millisecond)), reports[i].Asked)
		}
	}
}

// clocksLine is the summary's line of the skewed clocks, none for a run
// that skews none.
func clocksLine(reports []ClockReport) string {
	if len(reports) == 0 {
		return ""
	}
	parts := make([]string, 0, len(reports))
	for _, r := range reports {
		parts = append(parts, fmt.Sprintf("%s asked %s, read %+.0f s when ready and %+.0f s at the end", r.Shop, r.Asked, r.AtStart, r.AtEnd))
	}
	return "\nchaos: shops' clocks off the database's (their Date headers): " + strings.Join(parts, "; ")
}
