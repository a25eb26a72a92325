package chaos

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"exactlyonce/bench/chaos/chaosdb"
	"exactlyonce/internal/database"
	"exactlyonce/internal/mail"
	"exactlyonce/mailcatcher"
)

// The invariants a run checks. Each broken one is reported under its name.
const (
	violKeyTwoOrders         = "key with two orders"
	violChargeTwoOrders      = "charge in two orders"
	violChargeNoOrder        = "succeeded charge without an order or a refund"
	violLostKeyCharge        = "charge of a lost key (a retry charged again; refunded)"
	violRefundedOrder        = "order whose charge was refunded beyond the refunds the shop recorded"
	violOrderNoCharge        = "order without a succeeded charge of its amount"
	violSeen201Missing       = "201 seen by a client, not in the database"
	violSeen402HasOrder      = "402 seen by a client, but the key made an order"
	violNotCompletedRetrying = "payment not completed while the client retried"
	violKeyLeftStarted       = "key left started"
	violUnexpectedStatus     = "unexpected status"
	violServerError          = "500 answered"
	violServerErrorLog       = "500 in a shop's log"
	violNoRetryAfter         = "503 without Retry-After"
	violOrdersHalted         = "orders halted while SMTP stalled"
	violContradiction        = "contradictory answers for one key"
	violOrderNoPoints        = "order without its one loyalty ledger row"
	violOrderNoMail          = "order without its sent-mail record"
	violJobLeft              = "outbox job not finished"
	violJobDiscarded         = "outbox job given up"
	violNotMade              = "failover disruption not made"
	violNoWebhooks           = "no webhook reached the shops"
)

// check runs the invariants in SQL and against what the clients were told
// and the mail server received (mails), after the run has settled, and
// adds what broke to rep.
func check(ctx context.Context, cfg Config, conn, provider *database.DB, mails []mailcatcher.Message, rep *Report) error {
	q := chaosdb.New(conn.Conn())
	add := func(kind, example string) { rep.violate(kind, example) }
	for _, v := range rep.Clients.violations {
		add(v.kind, v.example)
	}
	if err := judgeRetried(ctx, cfg, q, rep); err != nil {
		return err
	}
	// A failover run proves something only with its failovers made: one
	// that ran out of drive is reported, as one that could not be made.
	d := rep.Disruptions
	for _, m := range []struct {
		kind        string
		asked, made int
	}{{windowFailover, cfg.Failovers, d.Failovers}, {windowSwitchover, cfg.Switchovers, d.Switchovers},
		{windowPrimaryKill, cfg.PrimaryKills, d.PrimaryKills}, {windowStandbyStop, cfg.StandbyStops, d.StandbyStops}} {
		if m.made < m.asked {
			add(violNotMade, fmt.Sprintf("%s: %d of %d made (errors: %s)", m.kind, m.made, m.asked, strings.Join(d.Errors, "; ")))
		}
	}
	expected := expectedRate(rep.Config.Checkouts, time.Duration(rep.Config.DurationSeconds*float64(time.Second)), rep.Clients.CreatedPerSecondClear)
	for _, h := range haltedBySMTP(rep.Disruptions.windows, rep.Clients.began, rep.Clients.created, expected) {
		add(violOrdersHalted, h)
	}

	many, err := q.ChaosKeysWithManyOrders(ctx)
	if err != nil {
		return err
	}
	for _, r := range many {
		add(violKeyTwoOrders, fmt.Sprintf("customer %s key %s: %d orders", r.CustomerID, r.IdempotencyKey, r.Orders))
	}
	shared, err := q.ChaosChargesInManyOrders(ctx)
	if err != nil {
		return err
	}
	for _, r := range shared {
		add(violChargeTwoOrders, fmt.Sprintf("charge %s: %d orders", r.ChargeID, r.Orders))
	}
	b, err := readBooks(ctx, conn, provider)
	if err != nil {
		return err
	}
	if b.recorded, err = recordedRefunds(ctx, q); err != nil {
		return err
	}
	// A charge without an order that the reconciler refunded is no
	// violation: the customer has the money back, as the audit trail says.
	for _, r := range b.chargesWithoutOrder() {
		add(violChargeNoOrder, fmt.Sprintf("charge %s of %d at %s", r.ID, r.Amount, time.Unix(r.Created, 0).Format("15:04:05")))
	}
	for _, r := range b.ordersWithoutCharge() {
		add(violOrderNoCharge, fmt.Sprintf("order %s (key %s) of %d", r.ID, r.IdempotencyKey, r.Amount))
	}
	// Unless the reconciler is wrong, such a refund means a key row was
	// lost after its provider call (a failover to a standby that had not
	// received it), and the client's retry became a new operation, charged
	// again: the customer was charged twice, once refunded.
	lost, err := q.ChaosLostKeyRefunds(ctx)
	if err != nil {
		return err
	}
	lostRefund := make(map[string]bool, len(lost))
	for _, r := range lost {
		lostRefund[r.ChargeID] = true
	}
	for _, r := range b.refundedOrders() {
		// A charge refunded as a lost operation's (no key row claimed it)
		// that an order holds: the key row was lost, and the client's
		// retry, under the same derived provider key, replayed that very
		// intent and made the order. Without that record, nothing explains
		// it.
		if ex := fmt.Sprintf("order %s (key %s): charge %s refunded, %d recorded", r.ID, r.IdempotencyKey, r.ChargeID, b.recorded[r.ID]); lostRefund[r.ChargeID] {
			rep.lostWrite(violRefundedOrder, ex+": refunded because no key row claimed it, then replayed by the retry")
		} else {
			add(violRefundedOrder, ex)
		}
	}
	for _, r := range lost {
		add(violLostKeyCharge, fmt.Sprintf("charge %s of %d refunded: no key row claimed it", r.ChargeID, r.Amount))
	}
	noPoints, err := q.ChaosOrdersWithoutPoints(ctx)
	if err != nil {
		return err
	}
	for _, r := range noPoints {
		add(violOrderNoPoints, fmt.Sprintf("order %s of %d", r.ID, r.Amount))
	}
	noMail, err := q.ChaosOrdersWithoutMail(ctx)
	if err != nil {
		return err
	}
	mailed := make(map[uuid.UUID]bool, len(mails))
	for _, m := range mails {
		if order, ok := mail.OrderOfMessageID(m.MessageID); ok {
			mailed[order] = true
		}
	}
	for _, r := range noMail {
		// The worker records a mail in the transaction that completes its
		// job, after sending it: an order whose confirmation the mail
		// server holds, with no record, had that record acknowledged and
		// then lost. With no mail received, nothing explains it.
		if ex := fmt.Sprintf("order %s", r.ID); mailed[r.ID] {
			rep.lostWrite(violOrderNoMail, ex+": its confirmation was received, its record is gone")
		} else {
			add(violOrderNoMail, ex)
		}
	}
	if left := rep.Outbox.Left; left != 0 {
		detail, err := q.ChaosJobsLeftDetail(ctx)
		if err != nil {
			return err
		}
		// One example that says of each left job (up to ten) when it is
		// due and why it failed, so that a failed CI run can be read.
		jobs := make([]string, 0, len(detail))
		for _, j := range detail {
			jobs = append(jobs, fmt.Sprintf("job %d (%s) %s after %d attempts, due in %.1f s, last error %q by %s",
				j.ID, j.Kind, j.State, j.Attempt, j.DueInSeconds, j.LastError, j.LastAttemptedBy))
		}
		add(violJobLeft, fmt.Sprintf("%d jobs not finished %.0f s after the keys settled: %s",
			left, rep.Outbox.SettleSeconds, strings.Join(jobs, "; ")))
	}
	discarded, err := q.ChaosJobsDiscarded(ctx)
	if err != nil {
		return err
	}
	if discarded > 0 {
		add(violJobDiscarded, fmt.Sprintf("%d jobs cancelled or discarded", discarded))
	}
	if rep.Unsettled > 0 {
		add(violKeyLeftStarted, fmt.Sprintf("%d keys still started %.0f s after the drive", rep.Unsettled, rep.SettleSeconds))
	}

	type ck struct {
		customer uuid.UUID
		key      string
	}
	orders, err := q.ChaosOrders(ctx)
	if err != nil {
		return err
	}
	orderOf := make(map[ck]uuid.UUID, len(orders))
	for _, o := range orders {
		orderOf[ck{o.CustomerID, o.IdempotencyKey}] = o.ID
	}
	keys, err := q.ChaosKeys(ctx)
	if err != nil {
		return err
	}
	stored := make(map[ck]int32, len(keys))
	for _, k := range keys {
		if k.ResponseStatus != nil {
			stored[ck{k.CustomerID, k.Key}] = *k.ResponseStatus
		}
	}
	// recorded reports whether the database holds a final answer a client
	// was given for k: its order, or its stored 402. An answer whose
	// record is gone was acknowledged and then lost.
	recorded := func(k ck, o outcome) bool {
		if o.status == http.StatusCreated {
			return orderOf[k] == o.orderID
		}
		return stored[k] == http.StatusPaymentRequired
	}
	customerOf := make(map[string]uuid.UUID, len(rep.Clients.outcomes))
	for _, o := range rep.Clients.outcomes {
		customerOf[o.key] = o.customer
		k := ck{o.customer, o.key}
		id, ordered := orderOf[k]
		switch o.status {
		case http.StatusCreated:
			if !recorded(k, o) {
				add(violSeen201Missing, fmt.Sprintf("key %s: client saw order %s, database has %s", o.key, o.orderID, id))
			}
		case http.StatusPaymentRequired:
			if ordered || !recorded(k, o) {
				ex := fmt.Sprintf("key %s: client saw 402 %s, database has order %s, stored %d", o.key, o.problem, id, stored[k])
				if recorded(k, o) {
					add(violSeen402HasOrder, ex)
				} else {
					rep.lostWrite(violSeen402HasOrder, ex+": the stored 402 is gone")
				}
			}
		}
	}
	// A key answered twice differently: a lost write explains it only when
	// the first answer's record is gone (a client saw order A, the
	// failover lost it, the retry ran anew and made order B); two answers
	// that the database holds both, or a first one it still holds, are a
	// broken promise.
	for _, c := range rep.Clients.contradictions {
		ex := fmt.Sprintf("key %s: %s, then %s", c.key, c.first.answer(), c.then.answer())
		if recorded(ck{customerOf[c.key], c.key}, c.first) {
			add(violContradiction, ex)
		} else {
			rep.lostWrite(violContradiction, ex+": the first answer's record is gone")
		}
	}

	totals, err := q.ChaosTotals(ctx)
	if err != nil {
		return err
	}
	succeeded, declined, refunds, canceled := b.totals()
	rep.Database = Totals{Orders: totals.Orders, ChargesSucceeded: succeeded,
		ChargesDeclined: declined, Keys: totals.Keys, Keys402: totals.Keys402,
		Refunds: refunds, CanceledKeys: canceled, ParkedKeys: totals.ParkedKeys, LostKeyRefunds: int64(len(lost))}
	effects, err := q.ChaosWebhookEffects(ctx)
	if err != nil {
		return err
	}
	rep.Database.WebhookEffects = map[string]int64{}
	for _, e := range effects {
		rep.Database.WebhookEffects[e.Effect] = e.Events
		rep.Database.WebhookEvents += e.Events
	}
	// A run whose webhooks never arrived tested none of their faults.
	if rep.Database.WebhookEvents == 0 && succeeded > 0 {
		add(violNoWebhooks, fmt.Sprintf("%d succeeded charges, no event in the shops' webhook inbox", succeeded))
	}
	jobs, err := q.ChaosJobTotals(ctx)
	if err != nil {
		return err
	}
	// Run has set the outbox's settling; these add to it.
	rep.Outbox.Jobs, rep.Outbox.Retried = jobs.Jobs, jobs.Retried
	if jobs.Jobs > 0 {
		j, err := q.ChaosSlowestJob(ctx)
		if err != nil {
			return err
		}
		rep.Outbox.SlowestSeconds = j.Seconds
		rep.Outbox.Slowest = fmt.Sprintf("job %d (%s), %d attempts: %s", j.ID, j.Kind, j.Attempt, j.Errors)
	}
	return nil
}

// keyTrail is one key's row and audit trail, in seconds into the drive,
// for a violation's example.
func keyTrail(ctx context.Context, q *chaosdb.Queries, began time.Time, customer uuid.UUID, key string) string {
	rows, err := q.ChaosKeyTrail(ctx, chaosdb.ChaosKeyTrailParams{Began: began, CustomerID: customer, Key: key})
	if err != nil {
		return "not read: " + err.Error()
	}
	if len(rows) == 0 {
		return "none (the key is gone)"
	}
	lines := make([]string, len(rows))
	for i, r := range rows {
		lines[i] = fmt.Sprintf("%.1fs %s %s", r.At, r.Event, r.Detail)
	}
	return strings.Join(lines, ", ")
}

// judgeSlack is what the judgement of a retried key's grace allows for:
// the ask is written with the shop's clock, the takeover judged with the
// database's, and the client's send is timed with its own.
const judgeSlack = 250 * time.Millisecond

// heardAt returns when a shop heard the request t, or the zero time if
// none did: one that was answered was heard when its shop could first hear
// it (sent to a paused shop, once the shop ran again: the long chaos run
// of 7 December counted a request sent to a shop paused until after the
// completer's takeover as heard before it), and one never answered was
// heard when it was sent if its shop could hear it until the client gave
// up (it waited on the database or on a row lock).
func (r *Clients) heardAt(t tried) time.Time {
	switch {
	case t.status != 0 && r.heardFrom != nil:
		return r.heardFrom(t.shop, t.sent)
	case t.status != 0, r.heard != nil && r.heard(t.shop, t.sent, t.answered):
		return t.sent
	}
	return time.Time{}
}

// judgeRetried judges each key whose retrying client was told "payment
// not completed" by the completer: it broke the completer's promise if a
// shop heard the client less than a grace before the completer took the
// key over. A request heard is one that was answered (from when its shop
// could hear it), or one sent to a shop that was neither paused nor down
// until the client gave up on it (it waited on the database, or on a row
// lock, and counts as an ask): heardAt.
// One whose every request in that grace went to shops that could not
// hear is counted (NotHeard), not failed on: no shop heard from it.
func judgeRetried(ctx context.Context, cfg Config, q *chaosdb.Queries, rep *Report) error {
	c := &rep.Clients
	customers := map[string]uuid.UUID{}
	for _, o := range c.outcomes {
		customers[o.key] = o.customer
	}
	judged := map[string]bool{}
	for _, key := range c.retried {
		if judged[key] {
			continue
		}
		judged[key] = true
		customer := customers[key]
		took, err := q.ChaosCompleterTookAt(ctx, chaosdb.ChaosCompleterTookAtParams{CustomerID: customer, Key: key})
		if err != nil {
			return err
		}
		at := time.Unix(0, int64(took*float64(time.Second)))
		var heard time.Time
		for _, t := range c.tries[key] {
			if from := c.heardAt(t); !from.IsZero() && from.Before(at) && from.After(heard) {
				heard = from
			}
		}
		if took != 0 && (heard.IsZero() || at.Sub(heard) >= cfg.CompleterGrace-judgeSlack) {
			c.NotHeard++
			continue
		}
		lines := make([]string, len(c.tries[key]))
		for i, t := range c.tries[key] {
			lines[i] = t.line(c.began)
		}
		rep.violate(violNotCompletedRetrying, fmt.Sprintf("key %s: taken over by the completer at %.1fs, %.1fs after a shop last heard its client; its requests: %s; its row and trail: %s",
			key, at.Sub(c.began).Seconds(), at.Sub(heard).Seconds(), strings.Join(lines, ", "), keyTrail(ctx, q, c.began, customer, key)))
	}
	return nil
}
