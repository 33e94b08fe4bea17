// Package metrics holds Switchboard's Prometheus metrics: the HTTP API's
// requests, webhook deliveries and message dispatches by outcome, asynq's
// queues and the engines this process holds, read when scraped. Handler
// serves them in Prometheus' text format.
package metrics

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/hibiken/asynq"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Registry holds every metric of the process.
var Registry = prometheus.NewRegistry()

var (
	// Requests counts the API's answers by route pattern, method and status.
	Requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "switchboard_http_requests_total",
		Help: "HTTP requests answered, by route pattern, method and status code.",
	}, []string{"route", "method", "status"})
	// Latency is how long the API took to answer, by route pattern and method.
	Latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "switchboard_http_request_duration_seconds",
		Help:    "Time to answer an HTTP request, by route pattern and method.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	}, []string{"route", "method"})
	// Deliveries counts webhook delivery attempts by outcome: succeeded,
	// retrying (failed, another attempt is scheduled) and failed (no attempt
	// left, or the webhook was disabled or deleted).
	Deliveries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "switchboard_webhook_deliveries_total",
		Help: "Webhook delivery attempts by outcome (succeeded, retrying, failed).",
	}, []string{"outcome"})
	// Dispatches counts messages handed to engines by outcome: sent,
	// rejected (failed for good) and retrying.
	Dispatches = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "switchboard_message_dispatches_total",
		Help: "Messages handed to an engine, by outcome (sent, rejected, retrying).",
	}, []string{"outcome"})
)

func init() {
	Registry.MustRegister(Requests, Latency, Deliveries, Dispatches,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
}

// Handler serves the registry in Prometheus' text format.
func Handler() http.Handler {
	return promhttp.HandlerFor(Registry, promhttp.HandlerOpts{ErrorLog: slogErrors{}})
}

type slogErrors struct{}

func (slogErrors) Println(v ...any) { slog.Warn("metrics", "err", v) }

// queues reports the depth and latency of asynq's queues, asked when scraped.
type queues struct {
	inspector *asynq.Inspector
	size      *prometheus.Desc
	latency   *prometheus.Desc
}

// watched holds the collectors registered by Watch*, by name, so that a
// process that assembles a second app (tests do) replaces them.
var (
	watchMu sync.Mutex
	watched = map[string]prometheus.Collector{}
)

func watch(name string, c prometheus.Collector) {
	watchMu.Lock()
	defer watchMu.Unlock()
	if old := watched[name]; old != nil {
		Registry.Unregister(old)
	}
	watched[name] = c
	Registry.MustRegister(c)
}

// WatchQueues registers the depth of every asynq queue by state (pending,
// active, scheduled, retry, archived) and the age of each queue's oldest
// pending task, read from Redis through inspector at each scrape.
func WatchQueues(inspector *asynq.Inspector) {
	watch("queues", &queues{inspector: inspector,
		size: prometheus.NewDesc("switchboard_queue_tasks", "Tasks in an asynq queue, by state.",
			[]string{"queue", "state"}, nil),
		latency: prometheus.NewDesc("switchboard_queue_latency_seconds", "Age of the oldest pending task of an asynq queue.",
			[]string{"queue"}, nil)})
}

// Describe implements prometheus.Collector.
func (q *queues) Describe(ch chan<- *prometheus.Desc) { ch <- q.size; ch <- q.latency }

// Collect implements prometheus.Collector.
func (q *queues) Collect(ch chan<- prometheus.Metric) {
	names, err := q.inspector.Queues()
	if err != nil {
		slog.Warn("metrics: listing queues failed", "err", err)
		return
	}
	for _, name := range names {
		info, err := q.inspector.GetQueueInfo(name)
		if err != nil {
			slog.Warn("metrics: reading a queue failed", "queue", name, "err", err)
			continue
		}
		for state, n := range map[string]int{"pending": info.Pending, "active": info.Active,
			"scheduled": info.Scheduled, "retry": info.Retry, "archived": info.Archived} {
			ch <- prometheus.MustNewConstMetric(q.size, prometheus.GaugeValue, float64(n), name, state)
		}
		ch <- prometheus.MustNewConstMetric(q.latency, prometheus.GaugeValue, info.Latency.Seconds(), name)
	}
}

// WatchGauges registers a gauge with one label, whose values by label value
// are read at each scrape, within a second; an error leaves the gauge out of
// that scrape.
func WatchGauges(name, help, label string, read func(context.Context) (map[string]float64, error)) {
	watch(name, &gauges{desc: prometheus.NewDesc(name, help, []string{label}, nil), read: read})
}

type gauges struct {
	desc *prometheus.Desc
	read func(context.Context) (map[string]float64, error)
}

// Describe implements prometheus.Collector.
func (g *gauges) Describe(ch chan<- *prometheus.Desc) { ch <- g.desc }

// Collect implements prometheus.Collector.
func (g *gauges) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	values, err := g.read(ctx)
	if err != nil {
		slog.Warn("metrics: reading a gauge failed", "metric", g.desc.String(), "err", err)
		return
	}
	for label, v := range values {
		ch <- prometheus.MustNewConstMetric(g.desc, prometheus.GaugeValue, v, label)
	}
}
