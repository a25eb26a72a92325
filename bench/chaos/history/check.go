package history

import (
	"cmp"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// The anomalies the checker reports, each under its name.
const (
	// Found by porcupine, over a key's client answers and its stored one.
	TwoSuccesses      = "two different successes for one key"
	ReplayDiffers     = "a replay that differs from the original"
	TwoAnswers        = "a success and a refusal for one key"
	AcknowledgedLost  = "an answer acknowledged and later lost"
	StoredDiffers     = "the stored answer differs from the one acknowledged"
	OpenAfterAnswered = "a key open again after its answer"
	NotLinearizable   = "not linearizable"
	// Found directly, over the final state of both sides.
	RefundedSuccess  = "a success whose charge was refunded beyond the refunds the shop recorded"
	OrderNoCharge    = "an order with no succeeded charge of its amount"
	ChargeNoOrder    = "a charge with no order and no refund"
	KeyTwoOrders     = "a key with two orders"
	ChargeTwoOrders  = "a charge in two orders"
	OtherCustomer    = "a success naming another customer's order"
	SuccessOrderGone = "an acknowledged success whose order is missing at the end"
	CheckerTimeLimit = "checker ran out of time"
)

// visualizationPart begins the name of each porcupine page.
const visualizationPart = "linearizability-"

// Anomaly is one thing the history shows the shop got wrong.
type Anomaly struct {
	Kind     string `json:"kind"`
	Customer string `json:"customer,omitempty"`
	Key      string `json:"key,omitempty"`
	Detail   string `json:"detail"`
	// History is the shortest history that shows it, one line per op:
	// for porcupine's finds, the key's ops cut down until removing any one
	// would make the rest linearizable.
	History []string `json:"history,omitempty"`
	// Visualization is porcupine's HTML page of History, when written.
	Visualization string `json:"visualization,omitempty"`
}

// Result is what the checker found, and how much it looked at.
type Result struct {
	Ops       int       `json:"ops"`
	Keys      int       `json:"keys"`
	Successes int       `json:"successes"`
	Replays   int       `json:"replays"`
	Intents   int       `json:"intents"`
	Orders    int       `json:"orders"`
	Anomalies []Anomaly `json:"anomalies"`
	Seconds   float64   `json:"seconds"`
	// File is where the history was written, when it was.
	File string `json:"file,omitempty"`
}

// Found reports whether kind is among the anomalies.
func (r Result) Found(kind string) bool {
	return slices.ContainsFunc(r.Anomalies, func(a Anomaly) bool { return a.Kind == kind })
}

// checkTimeout bounds porcupine's search: a write-once register's
// partitions are small, and a search that runs out says so (Unknown is
// reported, not taken for a pass).
const checkTimeout = 2 * time.Minute

// Check checks h. With dir set, porcupine's visualization of each key it
// finds not linearizable is written there.
func Check(h History, dir string) Result {
	began := time.Now()
	r := Result{Ops: len(h.Ops), Intents: len(h.Intents), Orders: len(h.Orders), Anomalies: []Anomaly{}}
	r.Anomalies = append(r.Anomalies, linearizable(h, dir, &r)...)
	r.Anomalies = append(r.Anomalies, direct(h)...)
	r.Seconds = time.Since(began).Seconds()
	return r
}

// linearizable runs porcupine over every key's ops and the answer the
// database stores for it at the end.
func linearizable(h History, dir string, r *Result) []Anomaly {
	var ops []porcupine.Operation
	last := int64(0)
	keys := map[[2]string]bool{}
	for _, op := range h.Ops {
		last = max(last, op.Return)
		if op.Status == http.StatusCreated && op.Kind == "" {
			r.Successes++
			if op.Replayed {
				r.Replays++
			}
		}
		if o, ok := operation(op); ok {
			ops = append(ops, o)
			keys[[2]string{op.Customer, op.Key}] = true
		}
	}
	stored := map[[2]string]Stored{}
	for _, st := range h.Keys {
		stored[[2]string{st.Customer, st.Key}] = st
	}
	endClient := 0
	for _, op := range h.Ops {
		endClient = max(endClient, op.Client+1)
	}
	for k := range keys {
		ops = append(ops, endOperation(k[0], k[1], stored[k], last+1, endClient))
	}
	r.Keys = len(keys)
	switch porcupine.CheckOperationsTimeout(registerModel, ops, checkTimeout) {
	case porcupine.Ok:
		return nil
	case porcupine.Unknown:
		return []Anomaly{{Kind: CheckerTimeLimit, Detail: fmt.Sprintf("porcupine found no answer in %s", checkTimeout)}}
	}
	var found []Anomaly
	for _, part := range partition(ops) {
		if porcupine.CheckOperations(registerModel, part) {
			continue
		}
		found = append(found, explain(minimize(part), dir, len(found)))
	}
	return found
}

// minimize drops ops from a key's history that is not linearizable for as
// long as what is left still is not: every op of the result is needed.
// The database's answer at the end goes first, so that a conflict between
// two answers the clients saw is shown as that, not as one of them against
// the stored answer.
func minimize(part []porcupine.Operation) []porcupine.Operation {
	ops := slices.Clone(part)
	slices.SortStableFunc(ops, func(a, b porcupine.Operation) int {
		return cmp.Compare(b.Input.(input).kind, a.Input.(input).kind)
	})
	for changed := true; changed; {
		changed = false
		for i := 0; i < len(ops); i++ {
			without := slices.Delete(slices.Clone(ops), i, i+1)
			if !porcupine.CheckOperations(registerModel, without) {
				ops, changed = without, true
				i--
			}
		}
	}
	return ops
}

// explain names what a minimal history shows and writes its visualization.
func explain(ops []porcupine.Operation, dir string, n int) Anomaly {
	slices.SortStableFunc(ops, func(a, b porcupine.Operation) int { return cmp.Compare(a.Call, b.Call) })
	first := ops[0].Input.(input).op
	a := Anomaly{Kind: kindOf(ops), Customer: first.Customer, Key: first.Key}
	for _, o := range ops {
		a.History = append(a.History, line(o))
	}
	a.Detail = fmt.Sprintf("%d operations on key %s are not linearizable as a write-once register", len(ops), first.Key)
	if dir == "" {
		return a
	}
	// The visualization numbers its rows from 0: one per client in the
	// minimal history, in order.
	rows := map[int]int{}
	vis := make([]porcupine.Operation, len(ops))
	for i, o := range ops {
		if _, ok := rows[o.ClientId]; !ok {
			rows[o.ClientId] = len(rows)
		}
		o.ClientId = rows[o.ClientId]
		vis[i] = o
	}
	_, info := porcupine.CheckOperationsVerbose(registerModel, vis, 0)
	path := filepath.Join(dir, fmt.Sprintf("%s%d.html", visualizationPart, n))
	if err := porcupine.VisualizePath(registerModel, info, path); err == nil {
		a.Visualization = path
	} else {
		a.Detail += fmt.Sprintf(" (visualization not written: %v)", err)
	}
	return a
}

// kindOf names the anomaly of a minimal history.
func kindOf(ops []porcupine.Operation) string {
	var finals []string
	stored, hasEnd, hasPending := "", false, false
	for _, o := range ops {
		switch o.Input.(input).kind {
		case final:
			finals = append(finals, o.Output.(string))
		case end:
			stored, hasEnd = o.Output.(string), true
		case pending:
			hasPending = true
		}
	}
	status := func(sig string) string { return strings.Fields(sig)[0] }
	order := func(sig string) string { return strings.Fields(sig)[1] }
	switch {
	case len(finals) >= 2 && status(finals[0]) != status(finals[1]):
		return TwoAnswers
	case len(finals) >= 2 && order(finals[0]) != order(finals[1]):
		return TwoSuccesses
	case len(finals) >= 2:
		return ReplayDiffers
	case hasEnd && stored == "":
		return AcknowledgedLost
	case hasEnd:
		return StoredDiffers
	case hasPending:
		return OpenAfterAnswered
	}
	return NotLinearizable
}

// line is one op of a minimal history for a person.
func line(o porcupine.Operation) string {
	in := o.Input.(input)
	if in.kind == end {
		return fmt.Sprintf("end of run: the database stores %s", short(o.Output.(string)))
	}
	s := fmt.Sprintf("client %d, %.3fs→%.3fs: %s", in.op.Client, float64(o.Call)/1e9, float64(o.Return)/1e9,
		registerModel.DescribeOperation(o.Input, o.Output))
	if in.op.ChargeID != "" {
		s += ", charge " + in.op.ChargeID
	}
	if in.op.Shop != "" {
		s += ", shop " + in.op.Shop
	}
	return s
}

// direct runs the checks that are not about one key's answers over time but
// about the final state of the two sides, the provider's and the shop's,
// against each other and against what the clients were told.
func direct(h History) []Anomaly {
	var found []Anomaly
	add := func(kind, customer, key, detail string, lines ...string) {
		found = append(found, Anomaly{Kind: kind, Customer: customer, Key: key, Detail: detail, History: lines})
	}
	intents := make(map[string]Intent, len(h.Intents))
	for _, in := range h.Intents {
		intents[in.ID] = in
	}
	type ck struct{ customer, key string }
	ordersOf := map[ck][]Order{}
	byCharge := map[string][]Order{}
	byID := map[string]Order{}
	for _, o := range h.Orders {
		ordersOf[ck{o.Customer, o.Key}] = append(ordersOf[ck{o.Customer, o.Key}], o)
		byCharge[o.ChargeID] = append(byCharge[o.ChargeID], o)
		byID[o.ID] = o
	}
	for k, os := range ordersOf {
		if len(os) > 1 {
			add(KeyTwoOrders, k.customer, k.key, fmt.Sprintf("%d orders: %s", len(os), orderList(os)))
		}
	}
	for charge, os := range byCharge {
		if len(os) > 1 {
			add(ChargeTwoOrders, os[0].Customer, os[0].Key, fmt.Sprintf("charge %s in %d orders: %s", charge, len(os), orderList(os)))
		}
	}
	// What the shop recorded as refunded of each order (issue 40): a
	// cancel, an operator's refund. The provider must have given back that
	// much of the order's charge, no more: a refund beyond it is one the
	// shop does not know of.
	recorded := map[string]int64{}
	for _, rf := range h.Refunds {
		recorded[rf.Customer+"/"+rf.OrderID] += rf.Amount
	}
	unrecorded := func(o Order, in Intent) bool { return in.refunded() != recorded[o.Customer+"/"+o.ID] }
	for _, o := range h.Orders {
		in, ok := intents[o.ChargeID]
		switch {
		case !ok || in.Status != "succeeded" || in.Amount != o.Amount:
			add(OrderNoCharge, o.Customer, o.Key, fmt.Sprintf("order %s of %d names charge %q: %s", o.ID, o.Amount, o.ChargeID, intentLine(in, ok)))
		case unrecorded(o, in):
			add(RefundedSuccess, o.Customer, o.Key, fmt.Sprintf("order %s holds charge %s, %d of it refunded at the provider, %d by the refunds the shop recorded",
				o.ID, o.ChargeID, in.refunded(), recorded[o.Customer+"/"+o.ID]))
		}
	}
	for _, in := range h.Intents {
		if in.Status == "succeeded" && !in.Refunded && len(byCharge[in.ID]) == 0 {
			add(ChargeNoOrder, in.Customer, in.Key, fmt.Sprintf("charge %s of %d at %s", in.ID, in.Amount, time.Unix(in.Created, 0).UTC().Format("15:04:05")))
		}
	}
	// What the clients were told against the final state: each success's
	// order is the key's, and still there; its charge was not given back.
	reported := map[string]bool{}
	for _, op := range h.Ops {
		if op.Status != http.StatusCreated || op.Kind != "" {
			continue
		}
		what := fmt.Sprintf("client %d, %.3fs→%.3fs: 201 order %s, charge %s", op.Client, float64(op.Call)/1e9, float64(op.Return)/1e9, op.OrderID, op.ChargeID)
		o, ok := byID[op.OrderID]
		id := op.Customer + "/" + op.Key + "/" + op.OrderID
		switch {
		case reported[id]:
		case ok && (o.Customer != op.Customer || o.Key != op.Key):
			reported[id] = true
			add(OtherCustomer, op.Customer, op.Key, fmt.Sprintf("order %s is customer %s's, of key %s", o.ID, o.Customer, o.Key), what)
		case !ok:
			reported[id] = true
			add(SuccessOrderGone, op.Customer, op.Key, fmt.Sprintf("order %s is not in the database; the key's orders: %s", op.OrderID, orderList(ordersOf[ck{op.Customer, op.Key}])), what)
		case unrecorded(o, intents[op.ChargeID]) && !reported[id+"/refund"]:
			reported[id+"/refund"] = true
			add(RefundedSuccess, op.Customer, op.Key, fmt.Sprintf("the client was told order %s, its charge %s was refunded", op.OrderID, op.ChargeID), what)
		}
	}
	slices.SortStableFunc(found, func(a, b Anomaly) int { return strings.Compare(a.Kind+a.Key, b.Kind+b.Key) })
	return found
}

func orderList(os []Order) string {
	if len(os) == 0 {
		return "none"
	}
	parts := make([]string, len(os))
	for i, o := range os {
		parts[i] = fmt.Sprintf("%s (charge %s)", o.ID, o.ChargeID)
	}
	return strings.Join(parts, ", ")
}

func intentLine(in Intent, ok bool) string {
	if !ok {
		return "no such intent at the provider"
	}
	return fmt.Sprintf("the provider has it %s for %d", in.Status, in.Amount)
}

// Summary is the result in one line.
func (r Result) Summary() string {
	if len(r.Anomalies) == 0 {
		return fmt.Sprintf("history: %d ops over %d keys (%d successes, %d replays), %d intents, %d orders: linearizable, 0 anomalies (%.2f s)",
			r.Ops, r.Keys, r.Successes, r.Replays, r.Intents, r.Orders, r.Seconds)
	}
	kinds := map[string]int{}
	for _, a := range r.Anomalies {
		kinds[a.Kind]++
	}
	parts := make([]string, 0, len(kinds))
	for k, n := range kinds {
		parts = append(parts, fmt.Sprintf("%s × %d", k, n))
	}
	slices.Sort(parts)
	return fmt.Sprintf("history: %d ops over %d keys, %d anomalies: %s", r.Ops, r.Keys, len(r.Anomalies), strings.Join(parts, "; "))
}

// textPerKind is how many anomalies of one kind Text shows.
const textPerKind = 3

// Text is the anomalies with their histories, for a person: a few of each
// kind, the rest counted.
func (r Result) Text() string {
	var b strings.Builder
	shown := map[string]int{}
	for _, a := range r.Anomalies {
		if shown[a.Kind]++; shown[a.Kind] > textPerKind {
			continue
		}
		fmt.Fprintf(&b, "history: %s: customer %s, key %s: %s\n", a.Kind, a.Customer, a.Key, a.Detail)
		for _, l := range a.History {
			fmt.Fprintf(&b, "    %s\n", l)
		}
		if a.Visualization != "" {
			fmt.Fprintf(&b, "    porcupine's page: %s\n", a.Visualization)
		}
	}
	for kind, n := range shown {
		if n > textPerKind {
			fmt.Fprintf(&b, "history: %d more of %q (every one is in the report's JSON)\n", n-textPerKind, kind)
		}
	}
	return b.String()
}

// Expected reports whether the anomalies include one whose kind contains
// any of want's parts, separated by "|": a mutation's run passes when its
// checker says so.
func (r Result) Expected(want string) bool {
	for _, w := range strings.Split(want, "|") {
		for _, a := range r.Anomalies {
			if w != "" && strings.Contains(a.Kind, w) {
				return true
			}
		}
	}
	return false
}
