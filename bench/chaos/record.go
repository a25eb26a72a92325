package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"

	"exactlyonce/bench/chaos/chaosdb"
	"exactlyonce/bench/chaos/history"
	"exactlyonce/fakestripe"
	"exactlyonce/internal/database"
)

// historyFile is the run's history, beside the processes' logs.
const historyFile = "history.json"

// record adds one order request's answer to the run's history.
func (s *spread) record(req *http.Request, sh shot) {
	op := history.Op{Client: s.client, Customer: s.customer.String(),
		Key: strings.Trim(req.Header.Get("Idempotency-Key"), `"`), Shop: sh.shop}
	if sh.err != nil {
		op.Err = sh.err.Error()
	}
	if sh.resp != nil {
		op.Status = sh.resp.StatusCode
		op.Replayed = sh.resp.Header.Get("Idempotent-Replayed") == "true"
		var out struct {
			OrderID  string `json:"order_id"`
			ChargeID string `json:"charge_id"`
			Type     string `json:"type"`
		}
		json.Unmarshal(sh.body, &out) //nolint:errcheck // a body that is not JSON names nothing
		op.OrderID, op.ChargeID, op.Problem = out.OrderID, out.ChargeID, out.Type
	}
	s.d.res.hist.Add(op, sh.sent, sh.done, sh.body)
}

// checkHistory reads both sides' final state into the run's history with
// what the clients saw, writes it to the run's folder, and checks it
// (package history). Porcupine's pages for the keys it finds not
// linearizable go beside it.
func checkHistory(ctx context.Context, cfg Config, dir string, shop, provider *database.DB, rep *Report) error {
	h := history.History{Seed: cfg.Seed, Ops: rep.Clients.hist.Ops()}
	intents, err := fakestripe.Ledger(ctx, provider.Pool)
	if err != nil {
		return fmt.Errorf("read the provider's ledger: %w", err)
	}
	for _, in := range intents {
		h.Intents = append(h.Intents, history.Intent{ID: in.ID, Customer: in.Metadata["customer_id"], Key: in.Metadata["idempotency_key"],
			Status: in.Status, Amount: in.Amount, Refunded: in.Refunded, AmountRefunded: in.AmountRefunded, Created: in.Created})
	}
	q := chaosdb.New(shop.Conn())
	orders, err := q.ChaosOrderCharges(ctx)
	if err != nil {
		return fmt.Errorf("read the orders: %w", err)
	}
	for _, o := range orders {
		h.Orders = append(h.Orders, history.Order{ID: o.ID.String(), Customer: o.CustomerID.String(),
			Key: o.IdempotencyKey, ChargeID: o.ChargeID, Amount: o.Amount})
	}
	keys, err := q.ChaosStoredAnswers(ctx)
	if err != nil {
		return fmt.Errorf("read the keys: %w", err)
	}
	for _, k := range keys {
		st := history.Stored{Customer: k.CustomerID.String(), Key: k.Key, Status: k.Status, ResponseStatus: int(k.ResponseStatus)}
		if k.ResponseBody != nil {
			st.BodyHash = history.Hash(k.ResponseBody)
			var out struct {
				OrderID string `json:"order_id"`
			}
			json.Unmarshal(k.ResponseBody, &out) //nolint:errcheck // a problem's body names no order
			st.OrderID = out.OrderID
		}
		h.Keys = append(h.Keys, st)
	}
	if err := addRefunds(ctx, q, &h); err != nil {
		return err
	}
	path := filepath.Join(dir, historyFile)
	if err := h.Write(path); err != nil {
		return err
	}
	rep.History = history.Check(h, dir)
	rep.History.File = path
	return nil
}

// addRefunds reads into h the refunds the shop recorded as made and every
// refund key's stored answer (issue 40), to hold against the provider's
// refunds and the refund clients' answers.
func addRefunds(ctx context.Context, q *chaosdb.Queries, h *history.History) error {
	refunds, err := q.ChaosRefunds(ctx)
	if err != nil {
		return fmt.Errorf("read the refunds: %w", err)
	}
	for _, r := range refunds {
		if r.State == "refunded" {
			h.Refunds = append(h.Refunds, history.Refund{ID: r.ID.String(), Customer: r.CustomerID.String(),
				OrderID: r.OrderID.String(), Amount: r.Amount, ProviderRefundID: r.ProviderRefundID})
		}
	}
	keys, err := q.ChaosRefundStoredAnswers(ctx)
	if err != nil {
		return fmt.Errorf("read the refund keys: %w", err)
	}
	for _, k := range keys {
		st := history.Stored{Kind: history.KindRefund, Customer: k.Scope, Key: k.Key, Status: k.Status,
			ResponseStatus: int(k.ResponseStatus), Location: k.Location}
		if k.Status == "finished" {
			// An answer without a body (the operator's 303) is recorded by
			// the hash of none, as the clients' are.
			st.BodyHash = history.Hash(k.ResponseBody)
			if k.ResponseStatus == http.StatusCreated {
				var out struct {
					ID string `json:"id"`
				}
				json.Unmarshal(k.ResponseBody, &out) //nolint:errcheck // judged by the history: no id, no match
				st.RefundID = out.ID
			}
		}
		h.Keys = append(h.Keys, st)
	}
	return nil
}
