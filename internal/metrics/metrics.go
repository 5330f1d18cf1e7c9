// Package metrics is drip's Prometheus instrumentation: one Registry per
// application (no global registry, so two apps in one test process count
// apart), the metric definitions, and the observers the services are told
// of their work through. The services define those observer interfaces
// themselves (ledger.Observer, store.Observer, payout.Observer) and run
// without one, so a package or a test that does not care needs no
// registry; the hot path pays an atomic add per event, on label children
// resolved once.
package metrics

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Path is where the metrics are served.
const Path = "/metrics"

// Other is the label of a value outside the known set (an unknown path, a
// coin not in the catalogue): a client cannot grow the series by making
// up names.
const Other = "other"

// latencyBuckets span a fast commit to the request deadline (5 s).
var latencyBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5}

// Registry holds one application's metrics.
type Registry struct {
	reg *prometheus.Registry

	requests    *prometheus.CounterVec   // interface, path, status
	v1Replies   *prometheus.CounterVec   // path, status (the v1 status in the body)
	sendSeconds *prometheus.HistogramVec // interface
	payouts     *prometheus.CounterVec   // coin
	refusals    *prometheus.CounterVec   // code, coin
	rateLimited *prometheus.CounterVec   // limit
	batchSize   prometheus.Histogram
	batchWait   prometheus.Histogram
	txSeconds   *prometheus.HistogramVec // outcome
	txRetries   prometheus.Counter

	// Label children resolved once, by their label values.
	v1Children     sync.Map // v1Key -> prometheus.Counter
	payoutChildren sync.Map // string coin -> prometheus.Counter
	refusalChild   sync.Map // refusalKey -> prometheus.Counter
	limitKey       prometheus.Counter
	limitCaller    prometheus.Counter
	txOK, txFailed prometheus.Observer
}

type v1Key struct {
	path   string
	status int
}

type refusalKey struct{ code, coin string }

// New returns a registry with drip's metrics and the Go runtime and
// process collectors.
func New() *Registry {
	r := &Registry{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "drip_http_requests_total",
			Help: "HTTP requests answered, by interface (v1, v2, mcp, web, console, other), path (unknown paths are \"other\") and HTTP status.",
		}, []string{"interface", "path", "status"}),
		v1Replies: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "drip_v1_replies_total",
			Help: "v1 replies by route and the status in their body (v1 always answers HTTP 200, D20).",
		}, []string{"path", "status"}),
		sendSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "drip_send_duration_seconds",
			Help:    "Time to answer a send request (v1 /send, v2 /send), from its arrival to its reply.",
			Buckets: latencyBuckets,
		}, []string{"interface"}),
		payouts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "drip_payouts_total",
			Help: "Payouts committed, by coin.",
		}, []string{"coin"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "drip_payout_refusals_total",
			Help: "Sends refused by the payout pipeline or the ledger, by error code and coin (\"other\" when the currency was not valid).",
		}, []string{"code", "coin"}),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "drip_rate_limited_total",
			Help: "Requests refused by a request-rate limit: a key's or v1 faucet's (key), or a caller IP's (caller_ip, D29).",
		}, []string{"limit"}),
		batchSize: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "drip_ledger_batch_payments",
			Help:    "Payments per committed group-commit transaction (D5).",
			Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512},
		}),
		batchWait: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "drip_ledger_commit_wait_seconds",
			Help:    "Time from a payment's hand-over to the ledger to the commit of its transaction.",
			Buckets: latencyBuckets,
		}),
		txSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "drip_store_transaction_duration_seconds",
			Help:    "Store transactions (Transact), retries included, by outcome (ok, error).",
			Buckets: latencyBuckets,
		}, []string{"outcome"}),
		txRetries: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "drip_store_transaction_retries_total",
			Help: "Store transactions rerun after losing a race (SQLite busy, PostgreSQL serialization failure or deadlock).",
		}),
	}
	r.reg.MustRegister(r.requests, r.v1Replies, r.sendSeconds, r.payouts, r.refusals, r.rateLimited,
		r.batchSize, r.batchWait, r.txSeconds, r.txRetries,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	r.limitKey = r.rateLimited.WithLabelValues("key")
	r.limitCaller = r.rateLimited.WithLabelValues("caller_ip")
	r.txOK = r.txSeconds.WithLabelValues("ok")
	r.txFailed = r.txSeconds.WithLabelValues("error")
	return r
}

// Handler serves the metrics in the Prometheus exposition format.
func (r *Registry) Handler() http.Handler {
	return promhttp.HandlerFor(r.reg, promhttp.HandlerOpts{Registry: r.reg})
}

// Gatherer is the registry, for tests that read the metrics directly.
func (r *Registry) Gatherer() prometheus.Gatherer { return r.reg }

// counter returns the child of m under k, creating it once with make.
func counter[K comparable](m *sync.Map, k K, make func() prometheus.Counter) prometheus.Counter {
	if c, ok := m.Load(k); ok {
		return c.(prometheus.Counter)
	}
	c, _ := m.LoadOrStore(k, make())
	return c.(prometheus.Counter)
}

// V1Replied counts a v1 reply of route path with the status in its body;
// apiv1.Options.Replied.
func (r *Registry) V1Replied(path string, status int) {
	counter(&r.v1Children, v1Key{path, status}, func() prometheus.Counter {
		return r.v1Replies.WithLabelValues(path, strconv.Itoa(status))
	}).Inc()
}

// The payout pipeline's observer (payout.Observer).

// Paid counts a committed payout of coin.
func (r *Registry) Paid(coin string) {
	counter(&r.payoutChildren, coin, func() prometheus.Counter { return r.payouts.WithLabelValues(coin) }).Inc()
}

// Refused counts a send refused with code; coin is "" (counted as Other)
// when the send's currency was not valid.
func (r *Registry) Refused(code, coin string) {
	if coin == "" {
		coin = Other
	}
	counter(&r.refusalChild, refusalKey{code, coin}, func() prometheus.Counter {
		return r.refusals.WithLabelValues(code, coin)
	}).Inc()
}

// RateLimited counts a request refused by the key's limit, or by the caller
// IP's when callerIP.
func (r *Registry) RateLimited(callerIP bool) {
	if callerIP {
		r.limitCaller.Inc()
		return
	}
	r.limitKey.Inc()
}

// The ledger's observer (ledger.Observer).

// BatchCommitted records a committed group-commit transaction of n payments.
func (r *Registry) BatchCommitted(n int) { r.batchSize.Observe(float64(n)) }

// PaymentCommitted records how long a payment waited for its commit.
func (r *Registry) PaymentCommitted(wait time.Duration) { r.batchWait.Observe(wait.Seconds()) }

// The store's observer (store.Observer).

// Transacted records a store transaction of the given attempts that took d
// in all and ended with err.
func (r *Registry) Transacted(d time.Duration, attempts int, err error) {
	if attempts > 1 {
		r.txRetries.Add(float64(attempts - 1))
	}
	if err != nil {
		r.txFailed.Observe(d.Seconds())
		return
	}
	r.txOK.Observe(d.Seconds())
}

// Backlog reads an outbox: how many rows wait for delivery, and when the
// oldest of them was written (zero when none wait).
type Backlog func(ctx context.Context) (pending int64, oldest time.Time, err error)

// Outbox exports an outbox's depth and delivery lag, read from the store
// at each scrape (so every node reports the same shared outbox, and a
// node without a worker reports it too). A scrape during a database
// outage leaves the two out rather than failing the whole scrape.
func (r *Registry) Outbox(name string, read Backlog, now func() time.Time) {
	r.reg.MustRegister(&outbox{read: read, now: now,
		depth: prometheus.NewDesc("drip_outbox_pending", "Rows of the outbox waiting for delivery.", nil,
			prometheus.Labels{"outbox": name}),
		lag: prometheus.NewDesc("drip_outbox_oldest_pending_age_seconds",
			"Age of the oldest row waiting for delivery; 0 when none waits.", nil, prometheus.Labels{"outbox": name}),
	})
}

// scrapeTimeout bounds the outbox query of a scrape.
const scrapeTimeout = 2 * time.Second

type outbox struct {
	read       Backlog
	now        func() time.Time
	depth, lag *prometheus.Desc
}

func (o *outbox) Describe(ch chan<- *prometheus.Desc) { ch <- o.depth; ch <- o.lag }

func (o *outbox) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	pending, oldest, err := o.read(ctx)
	if err != nil {
		return
	}
	age := 0.0
	if pending > 0 && !oldest.IsZero() {
		age = max(o.now().Sub(oldest).Seconds(), 0)
	}
	ch <- prometheus.MustNewConstMetric(o.depth, prometheus.GaugeValue, float64(pending))
	ch <- prometheus.MustNewConstMetric(o.lag, prometheus.GaugeValue, age)
}
