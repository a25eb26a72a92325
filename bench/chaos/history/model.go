package history

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/anishathalye/porcupine"
)

// The model is a write-once register per key: a key has no answer until
// its first final answer (a 201, or a 402 the shop stores) defines it, and
// from then on every final answer, every replay and the answer the
// database keeps at the end must be that one, byte for byte. That is what
// "exactly once" promises a client: one operation per key, whose answer
// never changes (docs/api.md, docs/kit.md).
//
// Linearizability says more than "all the key's answers agree" because
// the model also has reads that must see no answer yet: a 409
// request-in-progress or a 202 (the card holder is at their bank) says the
// key is still open, which is legal only if it can be ordered before the
// answer's definition. One whose request was sent after a success had
// come back cannot be, and porcupine finds it: an answer that the shop
// forgot for a moment.

// stepKind is what an operation does to the key's register.
type stepKind int

const (
	// final is a 201 or a 402: it defines the answer, or must equal it.
	final stepKind = iota
	// pending is a 409 request-in-progress or a 202: no answer yet.
	pending
	// end is the answer the database stores at the end of the run ("" for
	// none: the key started, or gone), read after every request returned.
	end
)

// input is an operation's input: what it does, and the op it stands for
// (an index into the partition's ops) for the descriptions.
type input struct {
	kind stepKind
	op   Op
}

// signature is what two answers must share to be the same answer: the
// status, the order, and every byte of the body.
func signature(status int, orderID, bodyHash string) string {
	if status == 0 {
		return ""
	}
	if orderID == "" {
		orderID = "-"
	}
	return fmt.Sprintf("%d %s %s", status, orderID, bodyHash)
}

// short is a signature for a person: the body's hash cut to 8 digits.
func short(sig string) string {
	if sig == "" {
		return "no answer"
	}
	parts := strings.Fields(sig)
	if len(parts) == 3 && len(parts[2]) > 8 {
		parts[2] = "body " + parts[2][:8]
	}
	return strings.Join(parts, " ")
}

// registerModel is the model, partitioned by customer and key.
var registerModel = porcupine.Model{
	Partition: func(ops []porcupine.Operation) [][]porcupine.Operation {
		return partition(ops)
	},
	Init: func() any { return "" },
	Step: func(state, in, out any) (bool, any) {
		s, i, o := state.(string), in.(input), out.(string)
		switch i.kind {
		case final:
			if s == "" {
				return true, o
			}
			return o == s, s
		case pending:
			return s == "", s
		default: // end: a key finished with no client told may store anything
			return s == "" || o == s, s
		}
	},
	DescribeOperation: func(in, out any) string {
		i, o := in.(input), out.(string)
		switch i.kind {
		case pending:
			return fmt.Sprintf("%d %s (still open)", i.op.Status, strings.TrimPrefix(i.op.Problem, "/problems/"))
		case end:
			return "stored at the end: " + short(o)
		}
		s := short(o)
		if i.op.Replayed {
			s += " (replayed)"
		}
		return s
	},
	DescribeState: func(state any) string {
		if state.(string) == "" {
			return "no answer yet"
		}
		return short(state.(string))
	},
}

// partition splits ops by customer and key, in a fixed order.
func partition(ops []porcupine.Operation) [][]porcupine.Operation {
	by := map[string][]porcupine.Operation{}
	var names []string
	for _, op := range ops {
		n := op.Input.(input).op.Customer + "/" + op.Input.(input).op.Key
		if _, ok := by[n]; !ok {
			names = append(names, n)
		}
		by[n] = append(by[n], op)
	}
	slices.Sort(names)
	out := make([][]porcupine.Operation, len(names))
	for i, n := range names {
		out[i] = by[n]
	}
	return out
}

// operation is op as the model's operation, or false for an op that says
// nothing of the key's answer (no answer, a 503, a 502: the outcome is
// unknown, and the client asks again).
func operation(op Op) (porcupine.Operation, bool) {
	kind, ok := orderStep(op)
	if op.Kind != "" {
		kind, ok = refundStep(op)
	}
	if !ok {
		return porcupine.Operation{}, false
	}
	return porcupine.Operation{ClientId: op.Client, Input: input{kind: kind, op: op},
		Call: op.Call, Output: signature(op.Status, op.answerID(), op.BodyHash), Return: op.Return}, true
}

// orderStep is what an order's answer does to its key's register. A 409
// sold-out claimed nothing: the key has no answer yet, as with a 409 in
// progress or a 202.
func orderStep(op Op) (stepKind, bool) {
	switch {
	case op.Status == http.StatusCreated || op.Status == http.StatusPaymentRequired:
		return final, true
	case op.Status == http.StatusAccepted,
		op.Status == http.StatusConflict && (op.Problem == inProgress || op.Problem == "/problems/sold-out"):
		return pending, true
	}
	return 0, false
}

// refundStep is what a cancel's or an operator refund's answer does to its
// key's register (issue 40). Final: the refund made (a cancel's 201, the
// operator's 303, which names how it ended) or refused by the provider for
// good (409 refund-refused, stored). No answer yet: a request in progress,
// a 503 refund-pending (the key is left started for the retry), and the
// refusals that reserve nothing and give the key up (the order cancelled
// already, its window closed, more asked than is left).
func refundStep(op Op) (stepKind, bool) {
	switch {
	case op.Status == http.StatusCreated || op.Status == http.StatusSeeOther,
		op.Status == http.StatusConflict && op.Problem == "/problems/refund-refused":
		return final, true
	case op.Status == http.StatusConflict && slices.Contains(refusals, op.Problem),
		op.Status == http.StatusServiceUnavailable && op.Problem == "/problems/refund-pending":
		return pending, true
	}
	return 0, false
}

// inProgress is the problem type of a key whose request is still running.
const inProgress = "/problems/request-in-progress"

// refusals are the refund answers that leave the key with no answer, a
// request in progress among them.
var refusals = []string{inProgress, "/problems/order-cancelled", "/problems/cancel-window-closed", "/problems/refund-exceeds-charge"}

// answerID is what names an answer besides its status and body: an order's
// id, a cancel's refund id, an operator refund's Location.
func (op Op) answerID() string {
	switch {
	case op.Kind == "":
		return op.OrderID
	case op.RefundID != "":
		return op.RefundID
	}
	return op.Location
}

// endOperation is the database's answer for a key, read after every op
// returned (at after).
func endOperation(customer, key string, st Stored, after int64, client int) porcupine.Operation {
	sig := ""
	if st.Status == "finished" {
		id := st.OrderID
		if st.Kind != "" {
			id = st.RefundID
			if id == "" {
				id = st.Location
			}
		}
		sig = signature(st.ResponseStatus, id, st.BodyHash)
	}
	return porcupine.Operation{ClientId: client,
		Input: input{kind: end, op: Op{Customer: customer, Key: key, Client: client}},
		Call:  after, Output: sig, Return: after}
}
