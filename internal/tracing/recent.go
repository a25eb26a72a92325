package tracing

import (
	"context"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Recent is a span processor that keeps the latest traces in memory for the
// admin listener's /traces page, grouped by trace and looked up by the
// idempotency key a span names (AttrKeyRef), or that a span links to: an
// outbox job's trace, which links to the finish that enqueued it, is
// listed under the order's key too.
//
// Its memory is bounded by a byte budget: each span kept is counted at a
// fixed overhead plus the length of its name and of its attributes' keys
// and values, each string value cut to maxValueBytes; when the total passes
// the budget, the oldest traces (by their first span to end) are dropped
// whole, with their place in the key index. One trace keeps at most
// maxSpansPerTrace spans, so that no single trace can push out all the
// others, and one key lists its latest maxTracesPerKey traces. The count is
// an estimate of the live heap, not an exact one; the Go runtime's own
// overhead comes on top.
type Recent struct {
	budget int

	mu     sync.Mutex
	used   int
	traces map[trace.TraceID]*storedTrace
	// order is the traces by first sighting, oldest first, from head on.
	order []trace.TraceID
	head  int
	byKey map[string][]trace.TraceID
}

// Limits of the store, besides its byte budget (see Recent).
const (
	maxSpansPerTrace = 512
	maxTracesPerKey  = 50
	maxLinkedFrom    = 32
	maxValueBytes    = 1024
	// spanOverhead is what a kept span costs besides its strings: the
	// Span struct, its slices' headers and the map and index entries.
	spanOverhead = 256
)

// Span is one span as the store keeps it.
type Span struct {
	SpanID, Parent trace.SpanID
	Name           string
	Kind           trace.SpanKind
	// Scope is the instrumentation that made it: the shop's packages,
	// otelhttp, otelpgx, otelriver.
	Scope      string
	Start, End time.Time
	Status     codes.Code
	// StatusMessage is the error's text for a span that failed.
	StatusMessage string
	Attributes    []attribute.KeyValue
	// Links are the spans, of other traces, that this one links to.
	Links []trace.SpanContext
}

type storedTrace struct {
	id      trace.TraceID
	spans   []Span
	size    int
	dropped int
	// keys are the key references the trace names, or links to; named
	// those its kept spans carry themselves (AttrKeyRef).
	keys  []string
	named []string
	// linkedFrom are later traces that link to this one.
	linkedFrom []trace.TraceID
}

// NewRecent returns a store that keeps about budget bytes of spans.
func NewRecent(budget int) *Recent {
	return &Recent{budget: budget, traces: map[trace.TraceID]*storedTrace{}, byKey: map[string][]trace.TraceID{}}
}

// OnEnd keeps the span s, which the provider hands over when it ends.
func (r *Recent) OnEnd(s sdktrace.ReadOnlySpan) {
	span := Span{
		SpanID: s.SpanContext().SpanID(), Parent: s.Parent().SpanID(), Name: s.Name(), Kind: s.SpanKind(),
		Scope: s.InstrumentationScope().Name, Start: s.StartTime(), End: s.EndTime(),
		Status: s.Status().Code, StatusMessage: cut(s.Status().Description),
	}
	size := spanOverhead + len(span.Name) + len(span.Scope) + len(span.StatusMessage)
	var refs []string
	attrs := s.Attributes()
	span.Attributes = make([]attribute.KeyValue, len(attrs))
	for i, a := range attrs {
		if a.Value.Type() == attribute.STRING {
			a = a.Key.String(cut(a.Value.AsString()))
		}
		if a.Key == AttrKeyRef {
			refs = append(refs, a.Value.AsString())
		}
		span.Attributes[i] = a
		size += len(a.Key) + len(a.Value.String())
	}
	for _, l := range s.Links() {
		span.Links = append(span.Links, l.SpanContext)
		size += 32
	}
	id := s.SpanContext().TraceID()

	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.traces[id]
	if t == nil {
		t = &storedTrace{id: id}
		r.traces[id] = t
		r.order = append(r.order, id)
	}
	if len(t.spans) >= maxSpansPerTrace {
		t.dropped++
		return
	}
	t.spans = append(t.spans, span)
	t.size += size
	r.used += size
	for _, ref := range refs {
		if !slices.Contains(t.named, ref) {
			t.named = append(t.named, ref)
		}
		r.index(t, ref)
	}
	for _, l := range span.Links {
		linked := r.traces[l.TraceID()]
		if linked == nil || linked == t {
			continue
		}
		for _, ref := range linked.keys {
			r.index(t, ref)
		}
		if !slices.Contains(linked.linkedFrom, id) && len(linked.linkedFrom) < maxLinkedFrom {
			linked.linkedFrom = append(linked.linkedFrom, id)
		}
	}
	r.evict()
}

// index lists t under the key ref.
func (r *Recent) index(t *storedTrace, ref string) {
	if slices.Contains(t.keys, ref) {
		return
	}
	t.keys = append(t.keys, ref)
	ids := append(r.byKey[ref], t.id)
	if len(ids) > maxTracesPerKey {
		ids = slices.Delete(ids, 0, len(ids)-maxTracesPerKey)
	}
	r.byKey[ref] = ids
}

// evict drops the oldest traces while the store is over its budget,
// keeping the newest one whatever its size (it is bounded by
// maxSpansPerTrace).
func (r *Recent) evict() {
	for r.used > r.budget && len(r.order)-r.head > 1 {
		t := r.traces[r.order[r.head]]
		r.head++
		delete(r.traces, t.id)
		r.used -= t.size
		for _, ref := range t.keys {
			ids := slices.DeleteFunc(r.byKey[ref], func(id trace.TraceID) bool { return id == t.id })
			if len(ids) == 0 {
				delete(r.byKey, ref)
			} else {
				r.byKey[ref] = ids
			}
		}
	}
	if r.head > len(r.order)/2 {
		r.order = slices.Delete(r.order, 0, r.head)
		r.head = 0
	}
}

// cut shortens s to maxValueBytes, at a rune boundary.
func cut(s string) string {
	if len(s) <= maxValueBytes {
		return s
	}
	n := maxValueBytes
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// OnStart does nothing: a span is kept once it has ended.
func (r *Recent) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

// Shutdown keeps what is kept: the page may still be read.
func (r *Recent) Shutdown(context.Context) error { return nil }

// ForceFlush has nothing to flush.
func (r *Recent) ForceFlush(context.Context) error { return nil }
