// Package metrics exports Folio's figures in Prometheus' text format on
// -metrics-addr (github.com/prometheus/client_golang): every command by
// name and outcome with a latency histogram, the server's counters and
// gauges read when scraped, and the Go runtime's and the process's
// metrics. Every name Folio defines starts with folio_.
package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
)

// Metrics is one server's metrics. A nil *Metrics records nothing.
type Metrics struct {
	reg      *prometheus.Registry
	commands *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

// New returns the metrics of a server, with the Go runtime's and the
// process's.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		commands: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "folio_commands_total",
			Help: "Commands run, by name and outcome: ok, or the MongoDB error code name they failed with.",
		}, []string{"command", "outcome"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "folio_command_duration_seconds",
			Help:    "Time from a command's arrival to its reply being built, by command.",
			Buckets: prometheus.ExponentialBuckets(50e-6, 2, 18), // 50 µs to 6.5 s
		}, []string{"command"}),
	}
	m.reg.MustRegister(m.commands, m.latency, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Command records a command that ran for d; outcome is "ok" or the name
// of the error code it failed with.
func (m *Metrics) Command(name, outcome string, d time.Duration) {
	if m == nil {
		return
	}
	m.commands.WithLabelValues(name, outcome).Inc()
	m.latency.WithLabelValues(name).Observe(d.Seconds())
}

// Gauge exports f's value, read at each scrape, as a gauge.
func (m *Metrics) Gauge(name, help string, f func() float64) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f))
}

// Counter exports f's value, read at each scrape, as a counter (f only
// grows).
func (m *Metrics) Counter(name, help string, f func() float64) {
	m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, f))
}

// CounterVec exports the values f reports for each value of one label, read
// at each scrape, as counters.
func (m *Metrics) CounterVec(name, help, label string, f func() map[string]float64) {
	m.reg.MustRegister(&funcVec{desc: prometheus.NewDesc(name, help, []string{label}, nil), f: f})
}

// Histogram exports the histogram f returns, read at each scrape, with its
// bucket bounds and sum multiplied by scale (Pebble's are in nanoseconds;
// Prometheus' convention is seconds).
func (m *Metrics) Histogram(name, help string, scale float64, f func() prometheus.Histogram) {
	m.reg.MustRegister(&scaledHistogram{desc: prometheus.NewDesc(name, help, nil, nil), scale: scale, f: f})
}

// scaledHistogram re-exports another histogram under its own name, scaled.
type scaledHistogram struct {
	desc  *prometheus.Desc
	scale float64
	f     func() prometheus.Histogram
}

func (h *scaledHistogram) Describe(ch chan<- *prometheus.Desc) { ch <- h.desc }

func (h *scaledHistogram) Collect(ch chan<- prometheus.Metric) {
	src := h.f()
	if src == nil {
		return
	}
	var m dto.Metric
	if err := src.Write(&m); err != nil || m.Histogram == nil {
		return
	}
	buckets := make(map[float64]uint64, len(m.Histogram.Bucket))
	for _, b := range m.Histogram.Bucket {
		buckets[b.GetUpperBound()*h.scale] = b.GetCumulativeCount()
	}
	ch <- prometheus.MustNewConstHistogram(h.desc, m.Histogram.GetSampleCount(), m.Histogram.GetSampleSum()*h.scale, buckets)
}

// Handler serves the metrics.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// funcVec is a counter per label value, read from a function.
type funcVec struct {
	desc *prometheus.Desc
	f    func() map[string]float64
}

func (v *funcVec) Describe(ch chan<- *prometheus.Desc) { ch <- v.desc }

func (v *funcVec) Collect(ch chan<- prometheus.Metric) {
	for label, value := range v.f() {
		ch <- prometheus.MustNewConstMetric(v.desc, prometheus.CounterValue, value, label)
	}
}
