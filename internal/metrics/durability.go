package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Durability is what a durability collector reads from the database at
// each scrape: whether a standby confirms every commit, and whether a
// failover or a crash could lose a key the shop acknowledged.
type Durability struct {
	Synchronous, AtRisk bool
}

// durabilityCollector asks the database at each scrape rather than
// keeping what start-up saw: a standby that goes away, or one that a
// failover leaves asynchronous, changes the answer while the shop runs.
type durabilityCollector struct {
	read                func(context.Context) (Durability, error)
	synchronous, atRisk *prometheus.Desc
}

// durabilityTimeout bounds the scrape's query: a scrape that hangs on a
// stalled database would hide every other metric.
const durabilityTimeout = time.Second

// RegisterDurability exports exactlyonce_db_synchronous_standby and
// exactlyonce_db_can_lose_acknowledged_keys, read at each scrape. A scrape
// that cannot read them leaves them out.
func (m *Metrics) RegisterDurability(read func(context.Context) (Durability, error)) {
	m.registry.MustRegister(&durabilityCollector{
		read: read,
		synchronous: prometheus.NewDesc("exactlyonce_db_synchronous_standby",
			"1 when a synchronous standby confirms every commit before it is acknowledged, so a failover to it loses nothing.", nil, nil),
		atRisk: prometheus.NewDesc("exactlyonce_db_can_lose_acknowledged_keys",
			"1 when a failover or a crash could lose a key the shop acknowledged (asynchronous standbys, synchronous_commit off): a client's retry of a lost key is charged again. See /readyz's durability check.", nil, nil),
	})
}

func (c *durabilityCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.synchronous
	ch <- c.atRisk
}

func (c *durabilityCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), durabilityTimeout)
	defer cancel()
	d, err := c.read(ctx)
	if err != nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(c.synchronous, prometheus.GaugeValue, boolValue(d.Synchronous))
	ch <- prometheus.MustNewConstMetric(c.atRisk, prometheus.GaugeValue, boolValue(d.AtRisk))
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
