package agent

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-hami/kubectl-hami/internal/agent/agentapi"
	"github.com/kubectl-hami/kubectl-hami/internal/codec"
)

// The wire types live in agentapi, so that readers do not link the agent; these names keep the agent's code short.
type (
	UsageReport   = agentapi.UsageReport
	GPUUsage      = agentapi.GPUUsage
	ProcessUsage  = agentapi.ProcessUsage
	MigUsage      = agentapi.MigInstanceUsage
	PodRef        = agentapi.PodRef
	DevicesReport = agentapi.DevicesReport
)

// Usage returns the live usage, read from the GPU source at most once per UsageMaxAge.
func (a *Agent) Usage() (*UsageReport, error) {
	a.usageMu.Lock()
	defer a.usageMu.Unlock()
	now := a.now()
	if a.usage != nil && a.opts.UsageMaxAge > 0 && now.Sub(a.usageAt) < a.opts.UsageMaxAge {
		return a.usage, nil
	}
	us, err := a.src.Usage()
	if err != nil {
		return nil, err
	}
	var migs []MigInstance
	var migErr error
	if m, ok := a.src.(MigManager); ok {
		migs, migErr = m.MigInstances()
	}
	a.mu.Lock()
	info := make(map[string]GPU, len(a.gpus))
	for _, g := range a.gpus {
		info[g.UUID] = g
	}
	registered := make(map[string]codec.DeviceInfo, len(a.devices))
	for _, d := range a.devices {
		registered[d.ID] = d
	}
	legacy := a.opts.RegisterFormat == FormatLegacy
	r := &UsageReport{Node: a.opts.NodeName, Time: now.UTC().Format("2006-01-02T15:04:05.999999999Z07:00"), GPUs: make([]GPUUsage, 0, len(us))}
	for _, u := range us {
		g := GPUUsage{
			Index: u.Index, UUID: u.UUID, MemoryUsedBytes: u.MemoryUsedBytes, MemoryTotalBytes: u.MemoryTotalBytes,
			Healthy: a.healthyLocked(u.UUID), Processes: make([]ProcessUsage, 0, len(u.Processes)),
		}
		if gi, ok := info[u.UUID]; ok {
			g.Type = TypeName(gi.Name, legacy)
			g.Healthy = g.Healthy && gi.Err == nil
			g.Mode = ModeHamiCore
			if gi.MIG {
				g.Mode = ModeMIG
			}
		}
		if d, ok := registered[u.UUID]; ok && a.opts.Mode == RunFull {
			g.Registered, g.Mode = true, d.Mode
		}
		if u.UtilizationKnown {
			v := u.Utilization
			g.Utilization = &v
		}
		if u.Err != nil {
			g.Error = u.Err.Error()
		}
		r.GPUs = append(r.GPUs, g)
	}
	a.mu.Unlock()
	for i := range r.GPUs {
		g := &r.GPUs[i]
		if g.Mode != ModeMIG {
			continue
		}
		if migErr != nil && g.Error == "" {
			g.Error = "MIG instances: " + migErr.Error()
		}
		for _, m := range migs {
			if m.GPUUUID != g.UUID {
				continue
			}
			mu := MigUsage{Profile: m.Profile, Placement: m.Placement, GPUInstanceID: m.GPUInstanceID, MigUUID: m.MigUUID, Busy: m.Busy}
			if m.HasComputeInstance {
				ci := m.ComputeInstanceID
				mu.ComputeInstanceID = &ci
			}
			if ref, ok := a.pods.lookupMig(m.MigUUID); ok {
				mu.Pod = &ref
			}
			g.MigInstances = append(g.MigInstances, mu)
		}
	}
	// Pod attribution reads /proc outside the lock.
	for i, u := range us {
		for _, p := range u.Processes {
			pu := ProcessUsage{PID: p.PID, MemoryUsedBytes: p.UsedMemoryBytes}
			if uid, cid, ok := PodOfPID(a.opts.ProcRoot, p.PID); ok {
				ref, known := a.pods.lookup(uid)
				if !known {
					ref = PodRef{UID: types.UID(uid)}
				}
				pu.Pod, pu.ContainerID = &ref, cid
			}
			r.GPUs[i].Processes = append(r.GPUs[i].Processes, pu)
		}
	}
	a.usage, a.usageAt = r, now
	return r, nil
}

func (a *Agent) invalidateUsage() {
	a.usageMu.Lock()
	a.usage = nil
	a.usageMu.Unlock()
}

// Handler serves GET /metrics (Prometheus), /usage (UsageReport), /devices (the registration), /healthz and
// /readyz, on plain HTTP paths so that the API server's pod proxy reaches them
// (/api/v1/namespaces/<ns>/pods/<pod>:<port>/proxy/usage).
func (a *Agent) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(a.registry, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	mux.HandleFunc("GET /usage", func(w http.ResponseWriter, _ *http.Request) {
		r, err := a.Usage()
		if err != nil {
			http.Error(w, "cannot read GPU usage: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		writeJSON(w, r)
	})
	mux.HandleFunc("GET /devices", func(w http.ResponseWriter, _ *http.Request) {
		a.mu.Lock()
		body := DevicesReport{
			Node: a.opts.NodeName, Mode: a.opts.Mode, Format: a.opts.RegisterFormat, Annotation: codec.NodeRegisterAnnotation,
			Value: a.value, Devices: a.devices,
		}
		a.mu.Unlock()
		if body.Devices == nil {
			body.Devices = []codec.DeviceInfo{}
		}
		writeJSON(w, body)
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !a.Ready() {
			http.Error(w, "no GPU scan has succeeded yet", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	return mux
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// Metric names. The per-GPU ones are HAMi's node monitor names (v2.9+), with its labels.
const (
	MetricMemoryUsed        = "hami_host_gpu_memory_used_bytes"
	MetricMemoryTotal       = "hami_host_gpu_memory_total_bytes"
	MetricUtilization       = "hami_host_gpu_utilization_ratio"
	MetricHealthy           = "hami_host_gpu_healthy"
	MetricProcessMemoryUsed = "hami_host_gpu_process_memory_used_bytes"
	MetricPodMemoryUsed     = "hami_host_gpu_pod_memory_used_bytes"
	MetricRegistrations     = "hami_agent_registrations_total"
	MetricXIDEvents         = "hami_agent_xid_events_total"
	MetricScanSeconds       = "hami_agent_scan_duration_seconds"
)

var (
	gpuLabels     = []string{"node", "device_uuid", "device_index", "device_type"}
	processLabels = append(append([]string(nil), gpuLabels...), "pid", "namespace", "pod", "pod_uid")
	podLabels     = append(append([]string(nil), gpuLabels...), "namespace", "pod", "pod_uid")
)

type agentMetrics struct {
	registrations *prometheus.CounterVec
	xids          *prometheus.CounterVec
	scanSeconds   prometheus.Gauge
}

// newRegistry builds the agent's own registry: the usage collector, the agent's counters and the Go and process
// collectors (process_resident_memory_bytes is the agent's RSS).
func newRegistry(a *Agent) (*prometheus.Registry, *agentMetrics) {
	reg := prometheus.NewRegistry()
	m := &agentMetrics{
		registrations: prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricRegistrations,
			Help: "Registration passes by result: patched, unchanged, skipped (no GPUs), error."}, []string{"result"}),
		xids: prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricXIDEvents,
			Help: "NVML critical XID events by GPU, XID (or lost) and action (unhealthy or ignored)."}, []string{"device_uuid", "xid", "action"}),
		scanSeconds: prometheus.NewGauge(prometheus.GaugeOpts{Name: MetricScanSeconds, Help: "Duration of the last GPU scan through NVML."}),
	}
	reg.MustRegister(&usageCollector{a: a}, m.registrations, m.xids, m.scanSeconds,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg, m
}

var (
	descMemoryUsed   = prometheus.NewDesc(MetricMemoryUsed, "GPU memory in use on the host (NVML), in bytes.", gpuLabels, nil)
	descMemoryTotal  = prometheus.NewDesc(MetricMemoryTotal, "GPU memory on the host (NVML), in bytes.", gpuLabels, nil)
	descUtilization  = prometheus.NewDesc(MetricUtilization, "GPU utilisation over NVML's last sample period, 0..1 (absent on MIG GPUs).", gpuLabels, nil)
	descHealthy      = prometheus.NewDesc(MetricHealthy, "1 while the GPU has had no critical XID event, else 0.", gpuLabels, nil)
	descProcessMem   = prometheus.NewDesc(MetricProcessMemoryUsed, "GPU memory used by one host process, in bytes; namespace/pod empty outside pods.", processLabels, nil)
	descPodMem       = prometheus.NewDesc(MetricPodMemoryUsed, "GPU memory used by the processes of one pod, in bytes.", podLabels, nil)
	usageCollectDesc = []*prometheus.Desc{descMemoryUsed, descMemoryTotal, descUtilization, descHealthy, descProcessMem, descPodMem}
)

// usageCollector turns a UsageReport into metrics at scrape time.
type usageCollector struct{ a *Agent }

func (c *usageCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range usageCollectDesc {
		ch <- d
	}
}

func (c *usageCollector) Collect(ch chan<- prometheus.Metric) {
	r, err := c.a.Usage()
	if err != nil {
		ch <- prometheus.NewInvalidMetric(descMemoryUsed, err)
		return
	}
	for _, g := range r.GPUs {
		lv := []string{r.Node, g.UUID, strconv.Itoa(g.Index), g.Type}
		ch <- prometheus.MustNewConstMetric(descMemoryUsed, prometheus.GaugeValue, float64(g.MemoryUsedBytes), lv...)
		ch <- prometheus.MustNewConstMetric(descMemoryTotal, prometheus.GaugeValue, float64(g.MemoryTotalBytes), lv...)
		if g.Utilization != nil {
			ch <- prometheus.MustNewConstMetric(descUtilization, prometheus.GaugeValue, *g.Utilization, lv...)
		}
		healthy := 0.0
		if g.Healthy {
			healthy = 1
		}
		ch <- prometheus.MustNewConstMetric(descHealthy, prometheus.GaugeValue, healthy, lv...)
		type podKey struct{ ns, name, uid string }
		pods := map[podKey]uint64{}
		var order []podKey
		for _, p := range g.Processes {
			var k podKey
			if p.Pod != nil {
				k = podKey{p.Pod.Namespace, p.Pod.Name, string(p.Pod.UID)}
				if _, ok := pods[k]; !ok {
					order = append(order, k)
				}
				pods[k] += p.MemoryUsedBytes
			}
			ch <- prometheus.MustNewConstMetric(descProcessMem, prometheus.GaugeValue, float64(p.MemoryUsedBytes),
				append(lv[:4:4], strconv.FormatUint(uint64(p.PID), 10), k.ns, k.name, k.uid)...)
		}
		for _, k := range order {
			ch <- prometheus.MustNewConstMetric(descPodMem, prometheus.GaugeValue, float64(pods[k]), append(lv[:4:4], k.ns, k.name, k.uid)...)
		}
	}
}
