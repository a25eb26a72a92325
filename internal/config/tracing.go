package config

import (
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"

	"exactlyonce/internal/tracing"
)

// loadTracing reads the tracing settings, under OpenTelemetry's own names
// where it has them (OTEL_SDK_DISABLED, OTEL_SERVICE_NAME,
// OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_TRACES_SAMPLER and _ARG), so that an
// operator's habits and a platform's injected variables work as they do
// elsewhere; the exporter reads the rest of its own (OTEL_EXPORTER_OTLP_HEADERS,
// _TIMEOUT, _COMPRESSION, _CERTIFICATE) itself.
func loadTracing() (tracing.Config, error) {
	t := tracing.Config{ServiceName: os.Getenv("OTEL_SERVICE_NAME"), SampleRatio: 1}
	var err error
	if t.Off, err = boolean("OTEL_SDK_DISABLED", false); err != nil {
		return t, err
	}
	if t.Endpoint = strings.TrimRight(os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT"), "/"); t.Endpoint != "" {
		u, err := url.Parse(t.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return t, fmt.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT: want the OTLP/HTTP collector's base URL, such as http://127.0.0.1:4318, got %q", t.Endpoint)
		}
	}
	switch sampler := getenv("OTEL_TRACES_SAMPLER", "parentbased_always_on"); sampler {
	case "parentbased_always_on":
	case "parentbased_always_off":
		t.SampleRatio = 0
	case "parentbased_traceidratio":
		arg := os.Getenv("OTEL_TRACES_SAMPLER_ARG")
		if t.SampleRatio, err = strconv.ParseFloat(arg, 64); err != nil || t.SampleRatio < 0 || t.SampleRatio > 1 {
			return t, fmt.Errorf("OTEL_TRACES_SAMPLER_ARG: want the share of traces to record, from 0 to 1, got %q", arg)
		}
	default:
		// The others ignore the caller's decision, which a service the
		// shop calls (the provider, in a collector) must follow to land in
		// the shop's traces.
		return t, fmt.Errorf("OTEL_TRACES_SAMPLER: want parentbased_always_on, parentbased_traceidratio or parentbased_always_off, got %q", sampler)
	}
	mib, err := count("RECENT_TRACES_MIB", tracing.DefaultRecentBytes>>20)
	if err != nil || mib > 1<<14 {
		return t, fmt.Errorf("RECENT_TRACES_MIB: want the MiB of memory kept for recent traces, from 0 to 16384, got %q", os.Getenv("RECENT_TRACES_MIB"))
	}
	t.RecentBytes = mib << 20
	return t, nil
}
