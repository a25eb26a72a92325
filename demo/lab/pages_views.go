package lab

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"exactlyonce/demo/lab/labviews"
	"exactlyonce/internal/problem"
)

// This file turns the lab's records into the view models of views/lab.templ.

// minBar is the narrowest bar of the timeline, in thousandths of its axis:
// an attempt answered in a millisecond must still show as a bar, not a
// hairline, on a projector.
const minBar = 14

func expectation(sc Scenario) string {
	return fmt.Sprintf("%s · %s", countNoun(sc.WantCharges, "charge"), countNoun(sc.WantOrders, "order"))
}

func countNoun(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func scenarioTitle(id string) string {
	if sc, ok := ScenarioByID(id); ok {
		return sc.Title
	}
	return "an earlier run"
}

func labResult(run Run) labviews.LabResult {
	r := labviews.LabResult{
		ScenarioID: run.Scenario, Ran: true, Running: run.Running,
		Charges: run.Charges, Orders: run.Orders, AsExpected: run.AsExpected,
		Notes: run.Notes, Error: run.Error,
	}
	for _, f := range run.Facts {
		r.Facts = append(r.Facts, labviews.LabFact{Label: f.Label, Value: f.Value})
	}
	for _, id := range run.Shoppers {
		r.Shoppers = append(r.Shoppers, labviews.LabShopper{
			Short: ShortID(id.String()), ID: id.String(),
			InspectURL: "/lab?" + url.Values{"customer": {id.String()}}.Encode() + "#inspector",
		})
	}
	sent := countNoun(int64(len(run.Attempts)), "attempt")
	if run.LaneNoun != "" {
		// The viewer counts the lanes (two clicks), not the requests.
		lanes := map[string]bool{}
		for _, a := range run.Attempts {
			lanes[a.Lane] = true
		}
		sent = countNoun(int64(len(lanes)), run.LaneNoun) + ", " + countNoun(int64(len(run.Attempts)), "request")
	}
	switch {
	case run.Running:
		r.Summary = sent + " so far"
	default:
		r.Summary = fmt.Sprintf("%s → %s, %s", sent, countNoun(run.Charges, "charge"), countNoun(run.Orders, "order"))
		r.Duration = seconds(run.Duration)
	}
	total := run.Duration
	for _, a := range run.Attempts {
		total = max(total, a.End)
	}
	for _, m := range run.Marks {
		total = max(total, m.At)
	}
	axis, ticks := timeAxis(total)
	r.Axis = ticks
	for _, m := range run.Marks {
		r.Marks = append(r.Marks, labMark(m, axis))
	}
	lanes := map[string]int{}
	for _, a := range run.Attempts {
		v := labAttempt(a, axis)
		i, ok := lanes[a.Lane]
		if !ok {
			i = len(r.Lanes)
			lanes[a.Lane] = i
			r.Lanes = append(r.Lanes, labviews.LabLane{Name: a.Lane})
		}
		if a.Lane != "" {
			// Each lane is numbered from 1: a click's own requests.
			v.N = len(r.Lanes[i].Attempts) + 1
		}
		v.Marks = r.Marks
		r.Attempts = append(r.Attempts, v)
		r.Lanes[i].Attempts = append(r.Lanes[i].Attempts, v)
	}
	r.Legend = legend(r)
	return r
}

// labMark places a mark on a time axis of length axis. Its label is drawn
// on the side of the line with the more room, so that it stays in the
// column.
func labMark(m Mark, axis time.Duration) labviews.LabMark {
	x := share(m.At, axis)
	v := labviews.LabMark{Label: m.Label, At: millis(m.At), X: x, Percent: fmt.Sprintf("%.1f%%", float64(x)/10), Anchor: "start"}
	if x > 600 {
		v.Anchor = "end"
	}
	return v
}

// legend says what the colours, badges and marks of a timeline mean: only
// those it shows, so that it stays one line.
func legend(r labviews.LabResult) []labviews.LabLegendItem {
	var tones = []struct{ tone, meaning string }{
		{"ok", "an order, or its receipt"},
		{"wait", "told to wait (409), or in flight"},
		{"refused", "refused (4xx)"},
		{"fail", "failed (5xx), or no answer"},
	}
	shown := map[string]bool{}
	for _, a := range r.Attempts {
		shown["tone-"+a.Tone] = true
		shown["lock-"+a.Lock] = a.Lock != ""
		shown["replayed"] = shown["replayed"] || (a.Lock == "" && a.Replayed)
	}
	var out []labviews.LabLegendItem
	for _, t := range tones {
		if shown["tone-"+t.tone] {
			out = append(out, labviews.LabLegendItem{Class: "lab-swatch tone-" + t.tone, Meaning: t.meaning})
		}
	}
	for _, b := range []struct{ lock, meaning string }{
		{string(LockHeld), "claimed the key's lock: it alone calls the provider"},
		{string(LockTookOver), "took the key over after its lock ran out"},
	} {
		if shown["lock-"+b.lock] {
			out = append(out, labviews.LabLegendItem{Class: "lab-lock", Sample: b.lock, Meaning: b.meaning})
		}
	}
	if shown["replayed"] {
		out = append(out, labviews.LabLegendItem{Class: "lab-replayed", Sample: "replayed", Meaning: "the stored answer, sent again"})
	}
	if len(r.Marks) > 0 {
		out = append(out, labviews.LabLegendItem{Class: "lab-swatch lab-mark-swatch", Meaning: "the instant the run turns on"})
	}
	return out
}

// timeAxis picks the length of a timeline's axis for a run of length total,
// a round number of milliseconds or seconds split in four, and labels its
// five ticks "0 100 200 300 400 ms" or "0 1 2 3 4 s": the unit once, at the
// end, so that the labels fit a narrow column.
func timeAxis(total time.Duration) (time.Duration, []labviews.LabTick) {
	step := time.Millisecond
	for _, m := range []time.Duration{1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000} {
		step = m * time.Millisecond
		if 4*step >= total {
			break
		}
	}
	unit, per := "ms", float64(time.Millisecond)
	if step >= time.Second {
		unit, per = "s", float64(time.Second)
	}
	ticks := make([]labviews.LabTick, 5)
	for i := range ticks {
		label := strconv.FormatFloat(float64(time.Duration(i)*step)/per, 'f', -1, 64)
		if i == len(ticks)-1 {
			label += " " + unit
		}
		ticks[i] = labviews.LabTick{At: i, Label: label}
	}
	return 4 * step, ticks
}

func labAttempt(a Attempt, axis time.Duration) labviews.LabAttempt {
	end := a.End
	if !a.Done {
		end = axis
	}
	v := labviews.LabAttempt{
		N: a.N, Label: a.Label, Key: a.Key, Short: ShortID(a.Key), Start: millis(a.Start), End: millis(a.End),
		BarX: share(a.Start, axis), InFlight: !a.Done, Replayed: a.Replayed, RetryAfter: a.RetryAfter,
		Lock: string(a.Lock), Tone: "wait", Waited: a.Waited,
	}
	if a.Done {
		v.Took = millis(a.End - a.Start)
	}
	v.BarWidth = max(share(end, axis)-v.BarX, minBar)
	v.BarX = min(v.BarX, 1000-minBar)
	if !a.Done {
		return v
	}
	v.Status, v.Tone, v.Outcome = describe(a)
	return v
}

// describe names an attempt's answer: its status, its colour, and in words.
func describe(a Attempt) (status, tone, outcome string) {
	if a.Status == 0 {
		return "—", "fail", a.Error
	}
	status = fmt.Sprint(a.Status)
	switch {
	case a.Page != "":
		// A browser's step: where it ended says more than the status.
		outcome, tone = a.Page, "ok"
		switch {
		case a.Status >= 500:
			tone = "fail"
		case a.Status >= 400:
			tone = "refused"
		case a.Page == shownProcessing:
			tone = "wait"
		}
		return status, tone, outcome
	case a.Replayed:
		tone, outcome = "ok", "replayed"
	case a.Status == http.StatusCreated:
		tone, outcome = "ok", "created"
	case a.Status == http.StatusConflict && a.Problem != problem.SoldOut.Slug:
		// Told to wait; sold out is a refusal, not a wait.
		tone = "wait"
	case a.Status >= 500:
		tone = "fail"
	default:
		tone = "refused"
	}
	if outcome == "" {
		outcome = http.StatusText(a.Status)
		for _, k := range problem.Kinds {
			if k.Slug == a.Problem {
				outcome = k.Title
			}
		}
	}
	return status, tone, outcome
}

func labInspection(in Inspection, scenario string, running bool) labviews.LabInspector {
	v := labviews.LabInspector{
		Customer: in.CustomerID.String(), Shopper: ShortID(in.CustomerID.String()), Scenario: scenario,
		Running: running, Key: in.Key, KeyShort: ShortID(in.Key),
	}
	q := url.Values{"customer": {v.Customer}}
	if running {
		// While the run is in flight the page follows whichever shopper
		// runs next, so the poll names none.
		q = url.Values{}
	}
	if in.Key != "" {
		q.Set("key", in.Key)
	}
	v.PollURL = "/lab/inspector?" + q.Encode()
	for _, k := range in.Keys {
		kv := labviews.LabKey{
			Key: k.Key, Short: ShortID(k.Key), Status: k.Status, Token: k.TokenPrefix,
			Selected: k.Key == in.Key, Response: "—",
			URL: "/lab?" + url.Values{"customer": {v.Customer}, "key": {k.Key}}.Encode() + "#inspector",
		}
		if k.ResponseCode != 0 {
			kv.Response = fmt.Sprint(k.ResponseCode)
		}
		switch {
		case k.Status == "finished":
			// A finished key holds no lock: its locked_until is only
			// where its last claim's lock would have ended.
			kv.Finished, kv.Lock = true, "none: finished"
		case k.LockRemaining > 0:
			kv.Lock = clock(k.LockedUntil) + " (in " + seconds(k.LockRemaining) + ")"
		default:
			kv.Lock = clock(k.LockedUntil) + " (expired)"
		}
		v.Keys = append(v.Keys, kv)
	}
	for _, e := range in.Events {
		v.Events = append(v.Events, labviews.LabEvent{At: clock(e.At), Event: e.Event, Words: eventWords(e.Event), Detail: detailWords(e.Detail)})
	}
	return v
}

func labFaults(csrf string, b Behaviour) labviews.LabFaults {
	return labviews.LabFaults{
		CSRF: csrf, DelayMS: b.Delay.Milliseconds(), Fail: b.Fail.String(),
		Options: []labviews.LabOption{
			{Value: string(FaultNone), Label: "None: a healthy provider"},
			{Value: string(FaultBeforeCharge), Label: "Fail before charging (500)"},
			{Value: string(FaultAfterCharge), Label: "Charge, then lose the response (500)"},
			{Value: string(FaultDecline), Label: "Decline every card (402)"},
			{Value: string(FaultTimeout), Label: "Hang until the client gives up, then charge"},
		},
	}
}

// share is d as thousandths of total.
func share(d, total time.Duration) int {
	if total <= 0 {
		return 0
	}
	return int(min(1000, d*1000/total))
}

func millis(d time.Duration) string { return fmt.Sprintf("%d ms", d.Milliseconds()) }

func seconds(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

func msToDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }

// clock is a time of day to the millisecond, in the server's zone: the
// order of events within a run is what matters, not the date.
func clock(t time.Time) string { return t.Local().Format("15:04:05.000") }

// parseFault is the panel's fault, one of Faults.
func parseFault(s string) (Fault, bool) {
	for _, f := range Faults {
		if s == string(f) {
			return f, true
		}
	}
	return "", false
}
