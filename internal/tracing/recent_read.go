package tracing

import (
	"slices"
	"time"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Summary is one kept trace in a list.
type Summary struct {
	ID trace.TraceID
	// Root is the name of its first span, the one that has no parent in
	// the trace (the request's, a job's, the completer's).
	Root     string
	Start    time.Time
	Duration time.Duration
	Spans    int
	Failed   bool
	// Linked is true when the trace is listed under a key only because it
	// links to a trace of the key (an outbox job's).
	Linked bool
}

// Trace is one kept trace, its spans by start time.
type Trace struct {
	Summary
	Spans []Span
	// Dropped counts the spans not kept past maxSpansPerTrace.
	Dropped int
	// LinkedFrom are kept traces that link to this one: the jobs of an
	// order, a completer's pass over its key.
	LinkedFrom []Summary
}

// Usage is what the store holds against its budget.
type Usage struct {
	Traces, Bytes, Budget int
	// Oldest is when the oldest kept trace began (zero with none): how
	// far back the store reaches, which the budget and the process's
	// start decide.
	Oldest time.Time
}

// Key lists the kept traces of the key whose reference is ref (KeyRef),
// newest first.
func (r *Recent) Key(ref string) []Summary {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Summary
	for _, id := range r.byKey[ref] {
		if t := r.traces[id]; t != nil {
			s := t.summary()
			s.Linked = !slices.Contains(t.named, ref)
			out = append(out, s)
		}
	}
	return newestFirst(out)
}

// Latest lists the n traces kept last, newest first.
func (r *Recent) Latest(n int) []Summary {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Summary
	for i := len(r.order) - 1; i >= r.head && len(out) < n; i-- {
		if t := r.traces[r.order[i]]; t != nil {
			out = append(out, t.summary())
		}
	}
	return newestFirst(out)
}

// newestFirst orders traces by their start, the latest first: the store
// meets a trace when its first span ends, which for a long request is
// after shorter ones that started later.
func newestFirst(ts []Summary) []Summary {
	slices.SortStableFunc(ts, func(a, b Summary) int { return b.Start.Compare(a.Start) })
	return ts
}

// Trace returns the kept trace id, if it is still kept.
func (r *Recent) Trace(id trace.TraceID) (Trace, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.traces[id]
	if t == nil {
		return Trace{}, false
	}
	out := Trace{Summary: t.summary(), Spans: slices.Clone(t.spans), Dropped: t.dropped}
	slices.SortStableFunc(out.Spans, func(a, b Span) int { return a.Start.Compare(b.Start) })
	for _, from := range t.linkedFrom {
		if l := r.traces[from]; l != nil {
			out.LinkedFrom = append(out.LinkedFrom, l.summary())
		}
	}
	return out, true
}

// Usage reports how many traces and bytes the store holds.
func (r *Recent) Usage() Usage {
	r.mu.Lock()
	defer r.mu.Unlock()
	u := Usage{Traces: len(r.traces), Bytes: r.used, Budget: r.budget}
	// Traces are dropped in the order the store met them, so the one that
	// began first is among the first met still kept: a long request met
	// after shorter ones that began later is found among the first 64,
	// without reading every span under the lock the spans are written
	// under.
	seen := 0
	for _, id := range r.order[r.head:] {
		if seen == 64 {
			break
		}
		if t := r.traces[id]; t != nil {
			seen++
			if start := t.summary().Start; u.Oldest.IsZero() || start.Before(u.Oldest) {
				u.Oldest = start
			}
		}
	}
	return u
}

// summary is t in a list. Its root is its earliest span whose parent is
// not in the trace: the trace's own root, or, for a trace joined from
// another process, the first span of this one. It starts with its earliest
// span, the root or not.
func (t *storedTrace) summary() Summary {
	s := Summary{ID: t.id, Spans: len(t.spans) + t.dropped}
	ids := make(map[trace.SpanID]bool, len(t.spans))
	for _, sp := range t.spans {
		ids[sp.SpanID] = true
	}
	var rootStart, earliest, end time.Time
	for i, sp := range t.spans {
		if !ids[sp.Parent] && (s.Root == "" || sp.Start.Before(rootStart)) {
			s.Root, rootStart = sp.Name, sp.Start
		}
		if i == 0 || sp.Start.Before(earliest) {
			earliest = sp.Start
		}
		if sp.End.After(end) {
			end = sp.End
		}
		s.Failed = s.Failed || sp.Status == codes.Error
	}
	s.Start = rootStart
	if earliest.Before(s.Start) {
		s.Start = earliest
	}
	s.Duration = end.Sub(s.Start)
	return s
}
