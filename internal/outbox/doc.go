// Package outbox is the shop's transactional outbox on River
// (github.com/riverqueue/river). When an order is written, the statement
// that writes it (FinishOrder, queries/orders.sql) also inserts one River
// job per consumer of the "order placed" event: the loyalty ledger
// (internal/loyalty) and the confirmation mail (internal/mail). The jobs
// exist exactly when the order does — a finish that rolls back or loses its
// key's lock inserts neither — and cost the order no extra round trip.
//
// River delivers each job at least once: a worker that dies after its
// effect and before the job is marked completed runs again. The consumers
// make that harmless themselves (see their packages); this package holds
// what the producer and the consumers share: the job kinds and arguments,
// and the River client that runs the workers.
package outbox
