package extender

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

// Metrics are the extender's own latency and decision metrics plus HAMi's allocation metrics, under HAMi's
// names, so that existing HAMi dashboards keep working.
type Metrics struct {
	registry  *prometheus.Registry
	latency   *prometheus.HistogramVec
	decisions *prometheus.CounterVec
	binds     *prometheus.CounterVec
	preempts  *prometheus.CounterVec
	// preemptions and victims count the extender's own preemptions (preemptor.go).
	preemptions *prometheus.CounterVec
	victims     prometheus.Counter
}

// NewMetrics registers the metrics; allocation gauges are read from the state at scrape time.
func NewMetrics(state *State) *Metrics {
	m := &Metrics{registry: prometheus.NewRegistry()}
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "kubectl_hami_extender_request_duration_seconds", Help: "Latency of extender requests by verb.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1},
	}, []string{"verb"})
	m.decisions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kubectl_hami_extender_filter_decisions_total", Help: "Filter answers by outcome and deciding reason.",
	}, []string{"result", "reason"})
	m.binds = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kubectl_hami_extender_binds_total", Help: "Bind calls by result.",
	}, []string{"result"})
	m.preempts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kubectl_hami_extender_preempt_nodes_total", Help: "Nodes of kube-scheduler's preemption candidates by the preempt verb's answer: node_kept, victims_added, node_dropped.",
	}, []string{"result"})
	m.preemptions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kubectl_hami_extender_preemptions_total", Help: "The extender's own preemption attempts for pods that fit nowhere, by outcome: preempted, no_candidate, waiting, fits, skipped, failed.",
	}, []string{"result"})
	m.victims = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "kubectl_hami_extender_preemption_victims_total", Help: "Pods the extender's own preemptions evicted.",
	})
	m.registry.MustRegister(m.latency, m.decisions, m.binds, m.preempts, m.preemptions, m.victims, &allocationCollector{state: state},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves /metrics.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

func (m *Metrics) observe(verb string, d time.Duration) {
	m.latency.WithLabelValues(verb).Observe(d.Seconds())
}

func (m *Metrics) decision(sum *engine.Summary) {
	switch v := sum.Verdict; {
	case v.NoGPURequest:
		m.decisions.WithLabelValues("no-gpu", "").Inc()
	case v.Fits:
		m.decisions.WithLabelValues("fits", "").Inc()
	case len(v.Reasons) > 0:
		m.decisions.WithLabelValues("pending", string(sum.MainReason().Code)).Inc() // the one rule of every surface
	default:
		m.decisions.WithLabelValues("pending", "NoNodes").Inc()
	}
}

// preempt counts one candidate node of the preempt verb by its answer.
func (m *Metrics) preempt(result string) { m.preempts.WithLabelValues(result).Inc() }

// preemption counts one attempt of the extender's own preemption, and its victims.
func (m *Metrics) preemption(outcome string, done *Preemption) {
	m.preemptions.WithLabelValues(outcome).Inc()
	if done != nil {
		m.victims.Add(float64(len(done.Victims)))
	}
}

// rollback counts a failed bind taken back.
func (m *Metrics) rollback() { m.binds.WithLabelValues("rolled_back").Inc() }

// alreadyBound counts a bind refused because the pod is bound, or being bound, already.
func (m *Metrics) alreadyBound() { m.binds.WithLabelValues("already_bound").Inc() }

func (m *Metrics) bindResult(ok bool) {
	if ok {
		m.binds.WithLabelValues("bound").Inc()
	} else {
		m.binds.WithLabelValues("failed").Inc()
	}
}

var (
	gpuLabels         = []string{"node", "device_uuid", "device_index", "device_type"}
	descMemLimit      = prometheus.NewDesc("hami_gpu_memory_limit_bytes", "GPU memory registered for sharing, in bytes.", gpuLabels, nil)
	descMemAllocated  = prometheus.NewDesc("hami_gpu_memory_allocated_bytes", "GPU memory allocated to pods, in bytes.", gpuLabels, nil)
	descCoreAllocated = prometheus.NewDesc("hami_gpu_core_allocated_ratio", "GPU cores allocated to pods, as a ratio of the GPU.", gpuLabels, nil)
	descShared        = prometheus.NewDesc("hami_gpu_shared_count", "vGPU slots in use on the GPU.", gpuLabels, nil)
	descQuotaUsed     = prometheus.NewDesc("hami_resource_quota_used", "Namespace quota used, as HAMi accounts it.", []string{"quota_namespace", "quota_name", "limit"}, nil)
	descQuotaLimit    = prometheus.NewDesc("hami_resource_quota_limit", "Namespace quota limit.", []string{"quota_namespace", "quota_name", "limit"}, nil)
)

// allocationCollector reads GPU and quota allocation from the engine at scrape time.
type allocationCollector struct{ state *State }

func (a *allocationCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descMemLimit, descMemAllocated, descCoreAllocated, descShared, descQuotaUsed, descQuotaLimit} {
		ch <- d
	}
}

func (a *allocationCollector) Collect(ch chan<- prometheus.Metric) {
	a.state.Read(func(c *engine.Cluster) {
		for _, name := range c.NodeNames() {
			for _, g := range c.Node(name).GPUs {
				l := []string{name, g.UUID, strconv.Itoa(g.Index), g.Type}
				ch <- prometheus.MustNewConstMetric(descMemLimit, prometheus.GaugeValue, float64(g.TotalMem)*1024*1024, l...)
				ch <- prometheus.MustNewConstMetric(descMemAllocated, prometheus.GaugeValue, float64(g.UsedMem)*1024*1024, l...)
				ratio := 0.0
				if g.TotalCores > 0 {
					ratio = float64(g.UsedCores) / float64(g.TotalCores)
				}
				ch <- prometheus.MustNewConstMetric(descCoreAllocated, prometheus.GaugeValue, ratio, l...)
				ch <- prometheus.MustNewConstMetric(descShared, prometheus.GaugeValue, float64(g.UsedSlots), l...)
			}
		}
		for _, ns := range c.QuotaNamespaces() {
			q := c.Quota(ns)
			for _, line := range []*engine.QuotaLine{q.Memory, q.Cores} {
				if line == nil {
					continue
				}
				ch <- prometheus.MustNewConstMetric(descQuotaUsed, prometheus.GaugeValue, float64(line.Used), ns, line.Source, line.Resource)
				ch <- prometheus.MustNewConstMetric(descQuotaLimit, prometheus.GaugeValue, float64(line.Limit), ns, line.Source, line.Resource)
			}
		}
	})
}
