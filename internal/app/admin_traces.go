package app

import (
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"exactlyonce/internal/tracing"
	"exactlyonce/views"
)

// latestTraces is how many traces /traces lists without a key.
const latestTraces = 50

// adminTraces is the admin listener's /traces: the latest traces this
// process keeps (tracing.Recent), or those of one key, asked for by its
// reference (?ref=, as a span names it) or by its customer and key
// (?customer=&key=, as the key inspector and an operator know it).
func (a *App) adminTraces(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p := views.AdminTraces{Ref: q.Get("ref"), Customer: strings.TrimSpace(q.Get("customer")), Key: q.Get("key"),
		Route: strings.TrimSpace(q.Get("route")), FailedOnly: q.Get("failed") != ""}
	switch {
	case p.Customer != "" && p.Key == "":
		p.Hint = "Traces are kept by idempotency key: give the key too (the customer's keys are on Find an order's page of each order). The latest traces are shown instead."
		p.Customer = ""
	case p.Key != "" && p.Customer == "":
		p.Hint = "A key is scoped to its customer: give the customer's id too. The latest traces are shown instead."
		p.Key = ""
	}
	if p.Customer != "" && p.Key != "" {
		// The scope is the customer's id as the shop writes it; a
		// customer id in another case or with braces names the same key.
		if id, err := uuid.Parse(p.Customer); err == nil {
			p.Customer = id.String()
		}
		p.Ref = tracing.KeyRef(p.Customer, p.Key)
	}
	recent := a.Tracing.Recent
	switch {
	case recent == nil:
		p.Off = "Tracing is off in this process (OTEL_SDK_DISABLED), or keeps no traces in memory (RECENT_TRACES_MIB=0)."
	case p.Ref != "":
		p.Traces = traceRows(filterTraces(recent.Key(p.Ref), p.Route, p.FailedOnly, math.MaxInt))
	default:
		// Filtered from all the kept traces, so that the latest failed
		// ones are found however many succeeded since.
		p.Traces = traceRows(filterTraces(recent.Latest(math.MaxInt), p.Route, p.FailedOnly, latestTraces))
	}
	if recent != nil {
		u := recent.Usage()
		p.Kept = fmt.Sprintf("It keeps %d traces in %s of its %s", u.Traces, mebibytes(u.Bytes), mebibytes(u.Budget))
		if !u.Oldest.IsZero() {
			p.Kept += fmt.Sprintf(", the oldest begun %s (%s ago)", u.Oldest.UTC().Format("2 Jan 15:04:05 MST"),
				time.Since(u.Oldest).Round(time.Second))
		}
		p.Kept += ", and none from before this process started or from another process."
	}
	if recent != nil || a.Tracing.Collector != "" {
		p.Reach = traceReach(a.Tracing.Collector)
	}
	a.renderAdmin(w, r, views.AdminTracesPage(p))
}

// traceReach says where traces older than this page's are: the collector
// spans are exported to, or nowhere until one is set.
func traceReach(collector string) string {
	if collector == "" {
		return "Nothing keeps them longer: set OTEL_EXPORTER_OTLP_ENDPOINT to an OTLP collector (docs/operations.md, With a collector) to keep every process's traces for as long as it does."
	}
	shown := collector
	if u, err := url.Parse(collector); err == nil {
		shown = u.Redacted()
	}
	return "Every span is also exported to the collector at " + shown + " (OTEL_EXPORTER_OTLP_ENDPOINT): older traces, and other processes', are there."
}

// filterTraces keeps, of ts, those whose root span's name holds route
// (case ignored) and, with failedOnly, that failed; at most n of them.
func filterTraces(ts []tracing.Summary, route string, failedOnly bool, n int) []tracing.Summary {
	route = strings.ToLower(route)
	out := ts[:0:0]
	for _, t := range ts {
		if len(out) == n {
			break
		}
		if (failedOnly && !t.Failed) || (route != "" && !strings.Contains(strings.ToLower(t.Root), route)) {
			continue
		}
		out = append(out, t)
	}
	return out
}

// adminTrace is the admin listener's /traces/{id}: one kept trace.
func (a *App) adminTrace(w http.ResponseWriter, r *http.Request) {
	id, err := trace.TraceIDFromHex(r.PathValue("id"))
	if err != nil {
		http.Error(w, "not a trace id: want 32 hexadecimal digits", http.StatusBadRequest)
		return
	}
	p := views.AdminTrace{ID: id.String()}
	if recent := a.Tracing.Recent; recent != nil {
		if t, ok := recent.Trace(id); ok {
			p = traceView(t)
		}
	}
	if !p.Found {
		w.WriteHeader(http.StatusNotFound)
	}
	a.renderAdmin(w, r, views.AdminTracePage(p))
}

// traceHref is where the admin listener shows a trace.
func traceHref(id trace.TraceID) string { return "/traces/" + url.PathEscape(id.String()) }

func traceRows(ts []tracing.Summary) []views.TraceRow {
	rows := make([]views.TraceRow, len(ts))
	for i, t := range ts {
		rows[i] = views.TraceRow{
			ID: t.ID.String(), Href: traceHref(t.ID), Root: t.Root, Start: t.Start.UTC().Format(time.DateTime + ".000"),
			Duration: millis(t.Duration), Spans: t.Spans, Failed: t.Failed, Linked: t.Linked,
		}
	}
	return rows
}

// traceView is a kept trace as the page shows it: its spans depth first,
// each after its parent, siblings by start time; a span whose parent is not
// in the trace (the root, or a span of this process in a trace begun
// elsewhere) starts a tree of its own.
func traceView(t tracing.Trace) views.AdminTrace {
	p := views.AdminTrace{ID: t.ID.String(), Found: true, Root: t.Root,
		Start: t.Start.UTC().Format(time.DateTime + ".000"), Duration: millis(t.Duration),
		Dropped: t.Dropped, LinkedFrom: traceRows(t.LinkedFrom)}
	children := map[trace.SpanID][]tracing.Span{}
	kept := map[trace.SpanID]bool{}
	for _, s := range t.Spans {
		kept[s.SpanID] = true
	}
	var roots []tracing.Span
	for _, s := range t.Spans { // by start time already
		if kept[s.Parent] {
			children[s.Parent] = append(children[s.Parent], s)
		} else {
			roots = append(roots, s)
		}
	}
	var walk func(s tracing.Span, depth int)
	walk = func(s tracing.Span, depth int) {
		p.Spans = append(p.Spans, spanRow(s, depth, t.Start, t.Duration))
		for _, c := range children[s.SpanID] {
			walk(c, depth+1)
		}
	}
	for _, s := range roots {
		walk(s, 0)
	}
	return p
}

func spanRow(s tracing.Span, depth int, start time.Time, total time.Duration) views.SpanRow {
	row := views.SpanRow{
		Name: s.Name, Kind: s.Kind.String(), Scope: s.Scope, Depth: depth,
		Offset: millis(s.Start.Sub(start)), Duration: millis(s.End.Sub(s.Start)),
		Failed: s.Status == codes.Error, Status: s.StatusMessage,
	}
	if total > 0 {
		x := int(1000 * s.Start.Sub(start) / total)
		row.Bar = views.SpanBar{X: x, Width: max(2, min(1000-x, int(1000*s.End.Sub(s.Start)/total)))}
	}
	for _, a := range s.Attributes {
		row.Attributes = append(row.Attributes, views.SpanAttribute{Key: string(a.Key), Value: a.Value.String()})
	}
	slices.SortFunc(row.Attributes, func(a, b views.SpanAttribute) int { return strings.Compare(a.Key, b.Key) })
	for _, l := range s.Links {
		row.Links = append(row.Links, views.SpanLink{TraceID: l.TraceID().String(), Href: traceHref(l.TraceID())})
	}
	return row
}

// millis writes d in milliseconds, as a waterfall reads best.
func millis(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}

// mebibytes writes n bytes in MiB, or KiB below one.
func mebibytes(n int) string {
	if n < 1<<20 {
		return fmt.Sprintf("%d KiB", (n+1<<10-1)>>10)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
