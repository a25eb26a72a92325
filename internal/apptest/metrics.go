package apptest

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Metric reads /metrics as Prometheus would, with its own parser of the
// exposition format (expfmt, which client_golang's testutil uses too), and
// returns the sum of the samples of name whose labels include every
// name=value pair of labels: one sample's value when the labels name it
// whole, 0 when there is none (a counter that never moved is not
// exported). name may be a histogram's _count or _sum.
func (h *Harness) Metric(tb testing.TB, name string, labels ...string) float64 {
	tb.Helper()
	r := h.Admin(tb, "/metrics")
	if r.Status != http.StatusOK {
		tb.Fatalf("metrics: got %d %s", r.Status, r.Body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(r.Body))
	if err != nil {
		tb.Fatalf("metrics: %v", err)
	}
	want := map[string]string{}
	for i := 0; i+1 < len(labels); i += 2 {
		want[labels[i]] = labels[i+1]
	}
	family, part := families[name], ""
	if family == nil {
		for _, suffix := range []string{"_count", "_sum"} {
			if base, ok := strings.CutSuffix(name, suffix); ok && families[base] != nil {
				family, part = families[base], suffix
			}
		}
	}
	if family == nil {
		return 0
	}
	total := 0.0
	for _, m := range family.GetMetric() {
		if hasLabels(m, want) {
			total += sampleValue(m, part)
		}
	}
	return total
}

// hasLabels reports whether m carries every pair of want.
func hasLabels(m *dto.Metric, want map[string]string) bool {
	got := make(map[string]string, len(m.GetLabel()))
	for _, l := range m.GetLabel() {
		got[l.GetName()] = l.GetValue()
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

// sampleValue is m's value, or its histogram's count or sum (part "_count",
// "_sum").
func sampleValue(m *dto.Metric, part string) float64 {
	switch {
	case part == "_count" && m.GetHistogram() != nil:
		return float64(m.GetHistogram().GetSampleCount())
	case part == "_sum" && m.GetHistogram() != nil:
		return m.GetHistogram().GetSampleSum()
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	case m.GetUntyped() != nil:
		return m.GetUntyped().GetValue()
	}
	return 0
}
