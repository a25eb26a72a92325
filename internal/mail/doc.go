// Package mail sends the order confirmation, the second consumer of the
// "order placed" event (internal/outbox), over SMTP with
// github.com/wneessen/go-mail.
//
// Mail cannot be taken back, so this consumer is at-least-once in one
// window, and says so: the worker sends, then records the sent mail
// (sent_mails) in the transaction that marks the job completed. A worker
// killed after the SMTP server accepted the message and before that commit
// sends it again when the job is redelivered. Both copies carry the same
// Message-ID, derived from the event (the order), so a mail system or
// client that collapses duplicates by Message-ID shows one. Outside that
// window nothing is sent twice: a job for an order whose mail is recorded
// completes without sending, and the jobs of one order run one at a time
// (a transaction-scoped advisory lock taken before the check).
package mail
