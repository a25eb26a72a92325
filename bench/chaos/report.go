package chaos

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"exactlyonce/bench/chaos/history"
	"exactlyonce/mailcatcher"
)

// Report is what a run saw: what the clients were told, what the run did,
// what the database holds, and every invariant that broke.
type Report struct {
	Config      ReportConfig `json:"config"`
	Clients     Clients      `json:"clients"`
	Disruptions Disruptions  `json:"disruptions"`
	Database    Totals       `json:"database"`
	// SettleSeconds is how long the completer took to settle every key
	// after the drive; Unsettled is how many were still started then.
	SettleSeconds float64 `json:"settle_seconds"`
	Unsettled     int64   `json:"unsettled"`
	// Logged5xx counts the 5xx answers in the shops' logs by status:
	// those the clients saw and those to clients that had hung up already
	// (an order held past the client's timeout by a lock or a stalled
	// database answers after FinishTimeout).
	Logged5xx  map[string]int `json:"logged_5xx"`
	Mail       MailTotals     `json:"mail"`
	Outbox     OutboxTotals   `json:"outbox"`
	Violations []Violation    `json:"violations"`
	// History is the history checker's verdict over what the clients saw
	// and both sides' final state (record.go, package history).
	History history.Result `json:"history"`

	// Refunds is what the books hold of refunds and stock (refund_check.go).
	Refunds RefundTotals `json:"refunds"`

	// Clocks are the skewed shops' clocks as read from outside (skew.go).
	Clocks  []ClockReport `json:"clocks,omitempty"`
	Seconds float64       `json:"seconds"`
	// Dir holds the processes' logs; it is deleted after a run that passed
	// unless it was given.
	Dir string `json:"dir"`
}

// ReportConfig is the part of Config worth reporting.
type ReportConfig struct {
	Instances        int     `json:"instances"`
	Clients          int     `json:"clients"`
	Checkouts        int     `json:"checkouts"`
	Seed             uint64  `json:"seed"`
	LockTimeout      float64 `json:"lock_timeout_seconds"`
	CompleterGrace   float64 `json:"completer_grace_seconds"`
	ProviderTimeout  float64 `json:"provider_timeout_seconds"`
	StallSeconds     float64 `json:"stall_seconds"`
	DBStallSeconds   float64 `json:"db_stall_seconds"`
	RowLockSeconds   float64 `json:"row_lock_seconds"`
	RowLockKeys      int     `json:"row_lock_keys"`
	SMTPStallSeconds float64 `json:"smtp_stall_seconds"`
	DurationSeconds  float64 `json:"duration_seconds"`
	// HA and Async: the shop's database was a formation, its standby
	// asynchronous; TailLagSeconds is how long a failover paused the
	// standby's WAL receiver before it killed the primary.
	HA             bool    `json:"ha,omitempty"`
	Async          bool    `json:"async,omitempty"`
	TailLagSeconds float64 `json:"tail_lag_seconds,omitempty"`
	// The provider's webhook faults: the shares of events delivered
	// twice and reordered, and the delay before every delivery.
	WebhookDuplicates   float64 `json:"webhook_duplicates"`
	WebhookReorder      float64 `json:"webhook_reorder"`
	WebhookDelaySeconds float64 `json:"webhook_delay_seconds"`
}

func reportConfig(c Config) ReportConfig {
	return ReportConfig{
		Instances: c.Instances, Clients: c.Clients, Checkouts: c.Checkouts, Seed: c.Seed,
		LockTimeout: c.LockTimeout.Seconds(), CompleterGrace: c.CompleterGrace.Seconds(),
		ProviderTimeout: c.ProviderTimeout.Seconds(), StallSeconds: c.stall().Seconds(),
		DBStallSeconds: c.DBStall.Seconds(), RowLockSeconds: c.RowLock.Seconds(), RowLockKeys: c.RowLockKeys,
		SMTPStallSeconds: c.SMTPStall.Seconds(), DurationSeconds: c.Duration.Seconds(),
		HA: c.HA, Async: c.Async, TailLagSeconds: c.TailLag.Seconds(),
		WebhookDuplicates: c.WebhookDuplicates, WebhookReorder: c.WebhookReorder, WebhookDelaySeconds: c.WebhookDelay.Seconds(),
	}
}

// Totals are counts read from the database after the run.
type Totals struct {
	Orders           int64 `json:"orders"`
	ChargesSucceeded int64 `json:"charges_succeeded"`
	ChargesDeclined  int64 `json:"charges_declined"`
	Keys             int64 `json:"keys"`
	Keys402          int64 `json:"keys_402"`
	// Refunds are charges the reconciler gave back (no order held them);
	// CanceledKeys are operations the completer closed at the provider
	// with no charge; ParkedKeys are poison keys left for an operator.
	Refunds      int64 `json:"refunds"`
	CanceledKeys int64 `json:"canceled_keys"`
	ParkedKeys   int64 `json:"parked_keys"`
	// LostKeyRefunds are refunds of charges no key row claimed: their key
	// was lost, and its retry charged again (a violation).
	LostKeyRefunds int64 `json:"lost_key_refunds"`
	// WebhookEvents are the provider's events the shops' webhook inbox
	// handled, each once however often it was delivered, and
	// WebhookEffects what it made of them (pending, matched, refunded,
	// recorded, ignored).
	WebhookEvents  int64            `json:"webhook_events"`
	WebhookEffects map[string]int64 `json:"webhook_effects"`
}

// OutboxTotals say how the orders' jobs fared: Retried were worked more
// than once (rescued from a dead worker, or retried after an error), and
// SlowestSeconds is the longest from a job's order to its end.
type OutboxTotals struct {
	// SettleSeconds is how long the jobs took to finish after the keys
	// had settled; Left is how many had not then.
	SettleSeconds  float64 `json:"settle_seconds"`
	Left           int64   `json:"left"`
	Jobs           int64   `json:"jobs"`
	Retried        int64   `json:"retried"`
	SlowestSeconds float64 `json:"slowest_seconds"`
	// Slowest says which job that was and what its errors were.
	Slowest string `json:"slowest"`
}

// Violation is one broken invariant: how often, and a few examples.
// LostWrites counts those of them that the run's own evidence shows to be
// the work of acknowledged writes a failover lost (see lostWrite): the
// asynchronous counterexample expects them, and fails on the rest.
type Violation struct {
	Kind       string   `json:"kind"`
	Count      int      `json:"count"`
	LostWrites int      `json:"lost_writes,omitempty"`
	Examples   []string `json:"examples"`
}

type violation struct{ kind, example string }

// maxExamples keeps a report readable when an invariant breaks often.
const maxExamples = 5

func (r *Report) violate(kind, example string) { r.add(kind, example, false) }

// lostWrite adds a violation that the run's evidence explains as the work
// of acknowledged writes a failover lost: its example says what showed it.
// It is still a violation (a synchronous run fails on it); only the
// asynchronous counterexample's verdict (Loss) expects it.
func (r *Report) lostWrite(kind, example string) {
	r.add(kind, example+" (a lost write explains it)", true)
}

func (r *Report) add(kind, example string, lost bool) {
	i := slices.IndexFunc(r.Violations, func(v Violation) bool { return v.Kind == kind })
	if i < 0 {
		r.Violations = append(r.Violations, Violation{Kind: kind, Examples: []string{}})
		sort.Slice(r.Violations, func(i, j int) bool { return r.Violations[i].Kind < r.Violations[j].Kind })
		i = slices.IndexFunc(r.Violations, func(v Violation) bool { return v.Kind == kind })
	}
	v := &r.Violations[i]
	v.Count++
	if lost {
		v.LostWrites++
	}
	if len(v.Examples) < maxExamples {
		v.Examples = append(v.Examples, example)
	}
}

// Loss is the verdict of the asynchronous counterexample. found counts the
// violations that are themselves acknowledged writes lost, as a failover to
// an asynchronous standby loses them: an order a client was told of that
// is gone, and a key lost after its provider call whose retry was charged
// again. other counts every violation that neither is one nor is shown,
// by the run's own evidence, to follow from one (Violation.LostWrites:
// a later answer contradicting a first one whose record is gone, a 402
// whose stored answer is gone while a retry made an order, an order whose
// confirmation the mail server received and whose record of it is gone).
// A violation of a kind that can follow from a lost write but for which
// the evidence is missing counts as other: the counterexample fails on
// anything a lost write does not explain.
func (r *Report) Loss() (found, other int) {
	for _, v := range r.Violations {
		switch v.Kind {
		case violSeen201Missing, violLostKeyCharge:
			found += v.Count
		default:
			other += v.Count - v.LostWrites
		}
	}
	return found, other
}

// LostWriteEffects counts the violations that Loss finds explained by lost
// writes without being one (Violation.LostWrites).
func (r *Report) LostWriteEffects() int {
	n := 0
	for _, v := range r.Violations {
		n += v.LostWrites
	}
	return n
}

// Passed reports whether every invariant held and the history checker
// found no anomaly. (The asynchronous counterexample's verdict, Loss, is
// the harness's own: its lost writes are anomalies of the history too.)
func (r *Report) Passed() bool { return len(r.Violations) == 0 && len(r.History.Anomalies) == 0 }

// Summary is the report in two lines: the verdict with what the run did
// and found, then every answer the clients got, by status and problem type,
// and the 5xx the shops logged.
func (r *Report) Summary() string {
	verdict := "PASS"
	switch {
	case len(r.Violations) > 0:
		var kinds []string
		for _, v := range r.Violations {
			kind := fmt.Sprintf("%d %s", v.Count, v.Kind)
			if v.LostWrites > 0 {
				kind += fmt.Sprintf(" (%d shown to follow from lost writes)", v.LostWrites)
			}
			kinds = append(kinds, kind)
		}
		verdict = "FAIL (" + strings.Join(kinds, "; ") + ")"
	case !r.Passed():
		verdict = "FAIL (the history checker's anomalies)"
	}
	c, d := r.Clients, r.Disruptions
	line := fmt.Sprintf("chaos: %s: %d checkouts (%d placed, %d declined, %d not completed (%d while the client retried, of keys %d no running shop heard within the grace), %d unresolved) in %d attempts over %d instances; "+
		"%d kill -9, %d SIGSTOP, %d PostgreSQL crashes, %d PostgreSQL SIGSTOP, %d row locks (%d keys, %d started), %d SMTP stalls, provider faults %s; %s"+
		"database: %d orders, %d succeeded charges, %d refunds (%d of lost keys); %d mails (%d sent again with the same Message-ID); keys settled in %.1f s, jobs %.1f s later (%d worked again, slowest %.1f s); %.0f s in all",
		verdict, c.Checkouts, c.Placed, c.Declined, c.NotCompleted, c.NotCompletedWhileRetrying, c.NotHeard, c.Unresolved, c.Attempts, r.Config.Instances,
		d.Kills, d.Stalls, d.DBCrashes, d.DBStalls, d.RowLocks, d.KeysLocked, d.StartedKeysLocked, d.SMTPStalls, d.ProviderFaults, failoversLine(d)+partitionsLine(d),
		r.Database.Orders, r.Database.ChargesSucceeded, r.Database.Refunds, r.Database.LostKeyRefunds, r.Mail.Messages, r.Mail.Resent, r.SettleSeconds,
		r.Outbox.SettleSeconds, r.Outbox.Retried, r.Outbox.SlowestSeconds, r.Seconds)
	logged := "none"
	if len(r.Logged5xx) > 0 {
		logged = answersLine(r.Logged5xx, nil)
	}
	o := c.LongestOutage
	a := c.Authentication
	return line + "\nchaos: " + r.History.Summary() + "\nchaos: " + webhooksLine(r.Config, r.Database) +
		fmt.Sprintf("\nchaos: 3-D Secure: %d checkouts sent to the bank (%d completed, %d completed twice at once, %d failed, %d abandoned; %d late at the bank, %d asked again late)",
			a.Asked, a.Completed, a.DoubleCompleted, a.Failed, a.Abandoned, a.Late, a.Slow) +
		"\nchaos: answers: " + answersLine(c.Statuses, c.Problems) + "; 5xx in the shops' logs: " + logged +
		fmt.Sprintf("\nchaos: longest span without a new order: %.1f s from %.1f s; answers meanwhile: %s",
			o.Seconds, o.FromSeconds, answersLine(o.Statuses, o.Problems)) + refundsLine(c.Refunds, r.Refunds) + clocksLine(r.Clocks)
}

// webhooksLine says how the provider's webhooks were disturbed and what
// the shops' inbox made of them.
func webhooksLine(c ReportConfig, t Totals) string {
	effects := make([]string, 0, len(t.WebhookEffects))
	for _, e := range slices.Sorted(maps.Keys(t.WebhookEffects)) {
		effects = append(effects, fmt.Sprintf("%d %s", t.WebhookEffects[e], e))
	}
	return fmt.Sprintf("webhooks: %.0f %% delivered twice, %.0f %% reordered, each %.0f ms late; %d events handled once each (%s)",
		100*c.WebhookDuplicates, 100*c.WebhookReorder, 1000*c.WebhookDelaySeconds, t.WebhookEvents, strings.Join(effects, ", "))
}

// failoversLine says what a failover run did to the formation, or nothing
// for a run on one server.
func failoversLine(d Disruptions) string {
	if d.Failovers+d.Switchovers+d.PrimaryKills+d.StandbyStops == 0 {
		return ""
	}
	return fmt.Sprintf("%d failovers, %d switchovers, %d primary postmaster kills, %d standby stops (the primary changed %d times); ",
		d.Failovers, d.Switchovers, d.PrimaryKills, d.StandbyStops, d.PrimaryChanges)
}

// partitionsLine says what a run with its own network (Config.Net) cut
// and slowed, or nothing.
func partitionsLine(d Disruptions) string {
	if d.Partitions+d.LossyLinks == 0 {
		return ""
	}
	kinds := make([]string, 0, len(d.PartitionKinds))
	for _, k := range slices.Sorted(maps.Keys(d.PartitionKinds)) {
		kinds = append(kinds, fmt.Sprintf("%d %s", d.PartitionKinds[k], k))
	}
	return fmt.Sprintf("%d partitions (%s), %d lossy links (%s); ", d.Partitions, strings.Join(kinds, ", "), d.LossyLinks, d.LinkMethod)
}

// MailTotals count the confirmations the shops sent. Resent are copies of
// a message already received (same Message-ID): the mail consumer's
// at-least-once window, a worker killed after sending and before recording.
type MailTotals struct {
	Messages int `json:"messages"`
	Resent   int `json:"resent"`
}

func mailTotals(msgs []mailcatcher.Message) MailTotals {
	seen := make(map[string]bool, len(msgs))
	t := MailTotals{Messages: len(msgs)}
	for _, m := range msgs {
		if seen[m.MessageID] {
			t.Resent++
		}
		seen[m.MessageID] = true
	}
	return t
}

// JSON is the whole report, indented.
func (r *Report) JSON() []byte {
	b, _ := json.MarshalIndent(r, "", "  ")
	return b
}
