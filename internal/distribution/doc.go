// Package distribution holds the test that keeps the schema ready to be
// distributed by customer_id (Citus): every query in queries/ on a hot table
// must name one customer, except the maintenance queries listed, with their
// reason, in its allow-list. See docs/scaling.md.
package distribution
