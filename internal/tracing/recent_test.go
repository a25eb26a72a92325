package tracing_test

import (
	"context"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"exactlyonce/internal/tracing"
)

// newRecent is a tracer whose spans go to a store of budget bytes only.
func newRecent(t *testing.T, budget int) (trace.Tracer, *tracing.Recent) {
	t.Helper()
	recent := tracing.NewRecent(budget)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recent))
	t.Cleanup(func() {
		if err := tp.Shutdown(context.Background()); err != nil {
			t.Errorf("shut the tracer provider down: %v", err)
		}
	})
	return tp.Tracer("test"), recent
}

// request makes a trace of a request about key: its span, named for the
// key, with a child; it returns the child's context, as a finish's.
func request(tracer trace.Tracer, scope, key string) trace.SpanContext {
	ctx, root := tracer.Start(context.Background(), "POST /api/orders",
		trace.WithAttributes(tracing.KeyAttributes(scope, key)...))
	_, child := tracer.Start(ctx, "checkout.finish")
	child.End()
	root.End()
	return child.SpanContext()
}

func TestRecentListsAKeysTracesAndThoseLinkedToThem(t *testing.T) {
	tracer, recent := newRecent(t, 1<<20)
	finish := request(tracer, "alice", "k")
	request(tracer, "alice", "other")
	request(tracer, "bob", "k") // the same key of another customer
	_, job := tracer.Start(context.Background(), "river.work/loyalty_points", trace.WithLinks(trace.Link{SpanContext: finish}))
	job.End()

	got := recent.Key(tracing.KeyRef("alice", "k"))
	if len(got) != 2 {
		t.Fatalf("got %d traces of alice's k, want 2 (the request's, the job's linked to it): %+v", len(got), got)
	}
	if got[0].ID != job.SpanContext().TraceID() || !got[0].Linked || got[0].Root != "river.work/loyalty_points" {
		t.Errorf("newest: got %+v, want the job's trace, listed as linked", got[0])
	}
	if got[1].ID != finish.TraceID() || got[1].Linked || got[1].Root != "POST /api/orders" || got[1].Spans != 2 {
		t.Errorf("oldest: got %+v, want the request's trace of 2 spans, named for the key", got[1])
	}
	tr, ok := recent.Trace(finish.TraceID())
	if !ok || len(tr.LinkedFrom) != 1 || tr.LinkedFrom[0].ID != job.SpanContext().TraceID() {
		t.Errorf("the request's trace: got %+v, want it linked from the job's", tr.LinkedFrom)
	}
	if latest := recent.Latest(10); len(latest) != 4 || latest[0].ID != job.SpanContext().TraceID() {
		t.Errorf("latest: got %d traces, newest %v; want 4, the job's first", len(latest), latest)
	}
}

// A trace is listed under a key as linked unless a span it keeps names the
// key itself: one naming the key after it linked to the key's trace is not
// linked; one whose span naming the key was dropped past the bound is.
func TestRecentTellsATraceNamingAKeyFromOneLinkedToIt(t *testing.T) {
	tracer, recent := newRecent(t, 64<<20)
	finish := request(tracer, "alice", "k")
	turn := func(name string, fill int) trace.TraceID {
		ctx, root := tracer.Start(context.Background(), name)
		_, link := tracer.Start(ctx, "checkout.settle", trace.WithLinks(trace.Link{SpanContext: finish}))
		link.End()
		for range fill {
			_, s := tracer.Start(ctx, "query SELECT")
			s.End()
		}
		root.SetAttributes(tracing.KeyAttributes("alice", "k")...)
		root.End()
		return root.SpanContext().TraceID()
	}
	named := turn("completer.turn", 0)
	dropped := turn("reconciler.pass", 1000)

	got := recent.Key(tracing.KeyRef("alice", "k"))
	if len(got) != 3 {
		t.Fatalf("got %d traces of alice's k, want 3: %+v", len(got), got)
	}
	if got[0].ID != dropped || !got[0].Linked {
		t.Errorf("newest: got %+v, want the pass whose span naming the key was dropped, listed as linked", got[0])
	}
	if got[1].ID != named || got[1].Linked {
		t.Errorf("second: got %+v, want the turn that names the key, not listed as linked", got[1])
	}
	if got[2].ID != finish.TraceID() || got[2].Linked {
		t.Errorf("oldest: got %+v, want the request's trace, named for the key", got[2])
	}
}

// The store keeps to its budget by dropping the oldest traces whole, and
// their place under their keys with them.
func TestRecentDropsTheOldestTracesPastItsBudget(t *testing.T) {
	tracer, recent := newRecent(t, 16<<10)
	first := request(tracer, "alice", "first")
	for i := range 200 {
		request(tracer, "alice", strings.Repeat("x", i))
	}
	u := recent.Usage()
	if u.Bytes > u.Budget || u.Traces == 0 || u.Traces >= 201 {
		t.Fatalf("got %+v, want some traces kept within the budget", u)
	}
	if _, ok := recent.Trace(first.TraceID()); ok {
		t.Error("the oldest trace is still kept past the budget")
	}
	if got := recent.Key(tracing.KeyRef("alice", "first")); len(got) != 0 {
		t.Errorf("the dropped trace's key still lists %v", got)
	}
}

// One trace keeps a bounded number of spans, so that it cannot push all
// the others out; the rest are counted.
func TestRecentBoundsOneTrace(t *testing.T) {
	tracer, recent := newRecent(t, 64<<20)
	ctx, root := tracer.Start(context.Background(), "reconciler.pass")
	for range 1000 {
		_, s := tracer.Start(ctx, "query SELECT")
		s.End()
	}
	root.End()
	tr, ok := recent.Trace(root.SpanContext().TraceID())
	if !ok {
		t.Fatal("trace not kept")
	}
	if len(tr.Spans) >= 1001 || len(tr.Spans)+tr.Dropped != 1001 {
		t.Errorf("got %d spans kept and %d dropped, want fewer than 1001 kept and the rest counted", len(tr.Spans), tr.Dropped)
	}
}

// A long attribute value (a statement's text) is cut, so that its size
// counts for no more than the cut.
func TestRecentCutsLongValues(t *testing.T) {
	tracer, recent := newRecent(t, 1<<20)
	_, s := tracer.Start(context.Background(), "query FinishOrder",
		trace.WithAttributes(tracing.AttrOutcome.String(strings.Repeat("é", 5000))))
	s.End()
	tr, _ := recent.Trace(s.SpanContext().TraceID())
	v := tr.Spans[0].Attributes[0].Value.AsString()
	if len(v) > 1100 || !strings.HasSuffix(v, "…") || !strings.HasPrefix(v, "éé") {
		t.Errorf("got a value of %d bytes ending %q, want it cut to about 1 KiB, at a character", len(v), v[len(v)-8:])
	}
}
