package lab

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// This file puts a key's audit trail (key_events) in words for the
// inspector: a room reads "lock until 13:45:02.120 · answered 201", not the
// event's JSON.

// eventWords names an audit event: "taken_over" reads "taken over".
func eventWords(event string) string { return strings.ReplaceAll(event, "_", " ") }

// detailOrder is the order the known fields of a detail are told in;
// others follow, by name.
var detailOrder = []string{"by", "attempt", "outcome", "status", "order_id", "locked_until",
	"payment_intent_id", "refund_id", "amount", "lost_operation", "created_at", "error"}

// detailWords tells an event's detail (a JSON object) in words. The trace
// context is left out: the inspector links the key's traces. Anything that
// is not an object is shown as it is.
func detailWords(detail string) string {
	var fields map[string]any
	if err := json.Unmarshal([]byte(detail), &fields); err != nil {
		return detail
	}
	delete(fields, "traceparent")
	names := make([]string, 0, len(fields))
	for name := range fields {
		names = append(names, name)
	}
	rank := func(name string) int {
		if i := slices.Index(detailOrder, name); i >= 0 {
			return i
		}
		return len(detailOrder)
	}
	slices.SortFunc(names, func(a, b string) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		return strings.Compare(a, b)
	})
	var parts []string
	for _, name := range names {
		if name == "currency" {
			continue // told with the amount
		}
		if w := fieldWords(name, fields[name], fields); w != "" {
			parts = append(parts, w)
		}
	}
	if len(parts) == 0 {
		return "—"
	}
	return strings.Join(parts, " · ")
}

func fieldWords(name string, v any, all map[string]any) string {
	text := fmt.Sprint(v)
	if f, ok := v.(float64); ok {
		text = fmt.Sprint(int64(f))
	}
	switch name {
	case "by":
		return "by the " + text
	case "attempt":
		return "attempt " + text
	case "outcome":
		return eventWords(text)
	case "status":
		if _, ok := v.(float64); ok {
			return "answered " + text
		}
		return "status " + text
	case "order_id":
		return "order " + ShortID(text)
	case "locked_until":
		return "lock until " + clockOf(text)
	case "created_at":
		return "created " + clockOf(text)
	case "payment_intent_id":
		return "charge " + text
	case "refund_id":
		return "refund " + text
	case "amount":
		if cur, ok := all["currency"].(string); ok {
			return "amount " + text + " " + strings.ToUpper(cur)
		}
		return "amount " + text
	case "lost_operation":
		return "lost operation " + ShortID(text)
	}
	return eventWords(name) + " " + text
}

// clockOf is a timestamp of a detail as the inspector's other times are
// shown, or as it is if it is not one.
func clockOf(s string) string {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	return clock(t)
}
