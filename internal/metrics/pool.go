package metrics

import (
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
)

// poolCollector reads the pgx pool's statistics at each scrape, so that the
// pool's size (DB_MAX_CONNS) can be judged from how often and how long
// requests wait for a connection.
type poolCollector struct {
	pool                                       *pgxpool.Pool
	max, total, idle, acquired                 *prometheus.Desc
	acquires, emptyAcquires, acquireWait, news *prometheus.Desc
}

// RegisterPool exports pool's statistics as exactlyonce_db_pool_* metrics.
func (m *Metrics) RegisterPool(pool *pgxpool.Pool) {
	d := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc("exactlyonce_db_pool_"+name, help, nil, nil)
	}
	m.registry.MustRegister(&poolCollector{
		pool:          pool,
		max:           d("max_conns", "DB_MAX_CONNS: the most connections the pool opens."),
		total:         d("conns", "Connections open now."),
		idle:          d("idle_conns", "Open connections no one is using."),
		acquired:      d("acquired_conns", "Connections in use."),
		acquires:      d("acquires_total", "Connections handed out."),
		emptyAcquires: d("empty_acquires_total", "Connections handed out after waiting, none being idle: when this grows with the load, the pool is too small (or the database too slow)."),
		acquireWait:   d("acquire_wait_seconds_total", "Time spent waiting for a connection."),
		news:          d("new_conns_total", "Connections opened."),
	})
}

func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.max, c.total, c.idle, c.acquired, c.acquires, c.emptyAcquires, c.acquireWait, c.news} {
		ch <- d
	}
}

func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.pool.Stat()
	gauge := func(d *prometheus.Desc, v float64) { ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v) }
	counter := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v)
	}
	gauge(c.max, float64(s.MaxConns()))
	gauge(c.total, float64(s.TotalConns()))
	gauge(c.idle, float64(s.IdleConns()))
	gauge(c.acquired, float64(s.AcquiredConns()))
	counter(c.acquires, float64(s.AcquireCount()))
	counter(c.emptyAcquires, float64(s.EmptyAcquireCount()))
	counter(c.acquireWait, s.EmptyAcquireWaitTime().Seconds())
	counter(c.news, float64(s.NewConnsCount()))
}
