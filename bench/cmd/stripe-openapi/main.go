// Command stripe-openapi trims Stripe's published OpenAPI description to the
// part of Stripe's API the shop uses, for the payment client's contract test
// (internal/payment/contract_test.go), which checks every request the SDK
// sends to the fake Stripe and every answer the fake gives against it.
//
// The source is the spec3.json that stripe-mock embeds, taken from the Go
// module cache at a pinned version (go mod download fetches it if it is not
// there), so the trimmed file is reproducible byte for byte:
//
//	go build -C bench -o ../bin/stripe-openapi ./cmd/stripe-openapi && bin/stripe-openapi   # from the repository's root
//
// It keeps the operations the payment client calls (create, list, retrieve,
// confirm and cancel a PaymentIntent; create a refund) and the schemas they
// reference, plus the event object and the objects the shop's webhook
// handler reads from events (payment_intent, charge). Three things are
// dropped on the way, none of them a constraint: descriptions and Stripe's
// x- extensions (prose and SDK hints), and the expanded alternatives of
// expandable fields (a field such as latest_charge is an id, or the whole
// object when a request asks for it with expand[]; the shop never expands,
// so it is an id, and the schemas of whole customers, invoices and the
// like, hundreds of them, go).
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// The pinned source. Its spec's API version is in the output's info.
const (
	module  = "github.com/stripe/stripe-mock"
	version = "v0.203.0"
	out     = "internal/payment/testdata/stripe-openapi.json"
)

// operations are the calls the payment client makes (internal/payment).
var operations = map[string][]string{
	"/v1/payment_intents":                  {"get", "post"},
	"/v1/payment_intents/{intent}":         {"get"},
	"/v1/payment_intents/{intent}/confirm": {"post"},
	"/v1/payment_intents/{intent}/cancel":  {"post"},
	"/v1/refunds":                          {"post"},
}

// objects are schemas kept besides those the operations reference: the
// event a webhook carries and the objects inside the events the shop
// handles.
var objects = []string{"event", "payment_intent", "charge"}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "stripe-openapi:", err)
		os.Exit(1)
	}
}

func run() error {
	dir, err := moduleDir()
	if err != nil {
		return err
	}
	b, err := os.ReadFile(filepath.Join(dir, "embedded", "openapi", "spec3.json"))
	if err != nil {
		return err
	}
	var spec map[string]any
	if err := json.Unmarshal(b, &spec); err != nil {
		return fmt.Errorf("spec3.json: %w", err)
	}
	trimmed, err := trim(spec)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(trimmed); err != nil {
		return err
	}
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Printf("stripe-openapi: %s (%d schemas, %d bytes) from %s@%s spec3.json\n",
		out, len(trimmed["components"].(map[string]any)["schemas"].(map[string]any)), buf.Len(), module, version)
	return nil
}

// moduleDir returns the pinned stripe-mock's folder in the module cache,
// downloading it if need be.
func moduleDir() (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", module+"@"+version)
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	cmd.Stderr = os.Stderr
	b, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %w", module, version, err)
	}
	var m struct{ Dir string }
	if err := json.Unmarshal(b, &m); err != nil || m.Dir == "" {
		return "", fmt.Errorf("go mod download %s@%s: no folder in %s", module, version, b)
	}
	return m.Dir, nil
}

// trim returns the kept operations and the schemas they reach.
func trim(spec map[string]any) (map[string]any, error) {
	paths, _ := spec["paths"].(map[string]any)
	keptPaths := map[string]any{}
	want := map[string]bool{}
	for _, name := range objects {
		want[name] = true
	}
	for path, methods := range operations {
		item, ok := paths[path].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("no path %s in the spec", path)
		}
		kept := map[string]any{}
		for _, m := range methods {
			op, ok := item[m]
			if !ok {
				return nil, fmt.Errorf("no %s %s in the spec", strings.ToUpper(m), path)
			}
			op = clean(op)
			refs(op, want)
			kept[m] = op
		}
		keptPaths[path] = kept
	}
	comps, _ := spec["components"].(map[string]any)
	all, _ := comps["schemas"].(map[string]any)
	schemas := map[string]any{}
	for len(want) > 0 {
		name := slices.Sorted(maps.Keys(want))[0]
		delete(want, name)
		if _, done := schemas[name]; done {
			continue
		}
		s, ok := all[name]
		if !ok {
			return nil, fmt.Errorf("no schema %s in the spec", name)
		}
		s = clean(s)
		schemas[name] = s
		found := map[string]bool{}
		refs(s, found)
		for n := range found {
			if _, done := schemas[n]; !done {
				want[n] = true
			}
		}
	}
	info, _ := spec["info"].(map[string]any)
	return map[string]any{
		"openapi": spec["openapi"],
		"info": map[string]any{
			"title":   "Stripe API, the part the shop uses",
			"version": info["version"],
			"description": fmt.Sprintf("Trimmed by bench/cmd/stripe-openapi from %s@%s embedded/openapi/spec3.json "+
				"(Stripe API version %v); do not edit.", module, version, info["version"]),
		},
		"servers":    spec["servers"],
		"security":   spec["security"],
		"paths":      keptPaths,
		"components": map[string]any{"schemas": schemas, "securitySchemes": clean(comps["securitySchemes"])},
	}, nil
}

// clean drops descriptions (but a response's, which OpenAPI requires) and
// x- extensions, and makes every expandable field its unexpanded form. A
// "description" whose value is an object is a property of that name, and
// stays.
func clean(v any) any {
	switch v := v.(type) {
	case map[string]any:
		if alts, ok := v["anyOf"].([]any); ok && v["x-expansionResources"] != nil {
			var ids []any
			for _, a := range alts {
				if m, ok := a.(map[string]any); !ok || m["$ref"] == nil {
					ids = append(ids, a)
				}
			}
			c := maps.Clone(v)
			delete(c, "anyOf")
			if len(ids) == 1 {
				maps.Copy(c, ids[0].(map[string]any))
			} else {
				c["anyOf"] = ids
			}
			v = c
		}
		out := map[string]any{}
		_, response := v["content"] // OpenAPI requires a response's description
		for k, x := range v {
			_, prose := x.(string)
			if prose && (k == "description" && !response || k == "summary") || strings.HasPrefix(k, "x-") {
				continue
			}
			out[k] = clean(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = clean(x)
		}
		return out
	}
	return v
}

// refs adds the schema names v references to found.
func refs(v any, found map[string]bool) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && k == "$ref" {
				found[strings.TrimPrefix(s, "#/components/schemas/")] = true
				continue
			}
			refs(x, found)
		}
	case []any:
		for _, x := range v {
			refs(x, found)
		}
	}
}
