// Package loyalty keeps the loyalty ledger: one row of points per order,
// written by the consumer of the "order placed" event (internal/outbox).
//
// Exactly once, under River's at-least-once delivery: the ledger row is
// keyed by the order (INSERT … ON CONFLICT DO NOTHING), and it is inserted
// in the same transaction that marks the job completed
// (river.JobCompleteTx). A worker killed between the two rolls both back and
// the redelivered job inserts the row once; a duplicate job for the same
// order, or one whose completion was lost after the commit, finds the row and
// inserts nothing. A balance is the SUM of a customer's rows, so nothing is
// ever added twice to a stored total.
package loyalty
