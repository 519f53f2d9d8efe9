package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
)

// Agent modes.
const (
	// RunFull registers the node's GPUs (hami.io/node-nvidia-register) and serves usage.
	RunFull = "full"
	// RunObserve only serves usage, for nodes where HAMi's own device plugin registers.
	RunObserve = "observe"
)

// Registration formats.
const (
	// FormatJSON is HAMi v2.8+'s JSON array.
	FormatJSON = "json"
	// FormatLegacy is the 9-field text form HAMi v2.5 to v2.7 schedulers read.
	FormatLegacy = "legacy"
)

// FieldManager names the agent in the Node's managed fields.
const FieldManager = "kubectl-hami-agent"

// reportedLayout is how the legacy handshake is stamped: time.Time.String() without the monotonic reading, which
// is what HAMi's device plugins up to v2.7 wrote.
const reportedLayout = "2006-01-02 15:04:05.999999999 -0700 MST"

// Options configure an Agent.
type Options struct {
	// NodeName is the Node the agent runs on and the only one it ever patches.
	NodeName string
	// Mode is RunFull or RunObserve.
	Mode string
	// RegisterFormat is FormatJSON or FormatLegacy.
	RegisterFormat string
	// RegisterInterval is the period of scans and registrations (HAMi: 30s); RetryInterval the wait after an
	// error (HAMi: 5s).
	RegisterInterval time.Duration
	RetryInterval    time.Duration
	// Settings come from flags and environment; the ConfigMap's entry for the node overrides them.
	Settings Settings
	// ConfigMap is "namespace/name" of HAMi's per-node device plugin ConfigMap (key config.json); empty for none.
	// It is re-read on every registration, so edits apply within one period.
	ConfigMap string
	// Listen is the HTTP address of /metrics, /usage, /devices, /healthz and /readyz; empty serves nothing.
	// Listener, when set, is used instead.
	Listen   string
	Listener net.Listener
	// ProcRoot is where /proc/<pid>/cgroup is read for pod attribution.
	ProcRoot string
	// PodLookup resolves pod UIDs to namespace/name by watching this node's pods (needs list/watch pods).
	PodLookup bool
	// UsageMaxAge is how long one usage reading serves scrapes and /usage before NVML is asked again.
	UsageMaxAge time.Duration
	// DevicePlugin, when set, also serves kubelet's device-plugin API (replacing HAMi's device plugin): GPUs as
	// split-count virtual devices, Allocate from the pods' hami.io/vgpu-devices-to-allocate. NodeName and Log are
	// filled in from these options. Needs full mode.
	DevicePlugin *DevicePluginOptions
	// Log receives the agent's log; nil discards it.
	Log *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// DefaultOptions are the defaults of `kubectl hami agent`.
func DefaultOptions() Options {
	return Options{
		Mode:             RunFull,
		RegisterFormat:   FormatJSON,
		RegisterInterval: 30 * time.Second,
		RetryInterval:    5 * time.Second,
		Settings:         DefaultSettings(),
		Listen:           ":9394",
		ProcRoot:         "/proc",
		PodLookup:        true,
		UsageMaxAge:      time.Second,
	}
}

// Validate checks the options.
func (o Options) Validate() error {
	if o.NodeName == "" {
		return errors.New("no node name: set --node-name or the NODE_NAME environment variable (the DaemonSet sets it from spec.nodeName)")
	}
	if o.Mode != RunFull && o.Mode != RunObserve {
		return fmt.Errorf("--mode %q: want %s or %s", o.Mode, RunFull, RunObserve)
	}
	if o.RegisterFormat != FormatJSON && o.RegisterFormat != FormatLegacy {
		return fmt.Errorf("--register-format %q: want %s or %s", o.RegisterFormat, FormatJSON, FormatLegacy)
	}
	if o.RegisterInterval <= 0 || o.RetryInterval <= 0 {
		return errors.New("--register-interval and --retry-interval must be positive")
	}
	if o.ConfigMap != "" && !strings.Contains(o.ConfigMap, "/") {
		return fmt.Errorf("--configmap %q: want namespace/name", o.ConfigMap)
	}
	if o.DevicePlugin != nil {
		if o.Mode != RunFull {
			return fmt.Errorf("--device-plugin needs --mode=%s: in %s mode HAMi's own device plugin serves kubelet", RunFull, o.Mode)
		}
		dp := o.devicePluginOptions(nil)
		if err := dp.Validate(); err != nil {
			return err
		}
	}
	return o.Settings.Validate()
}

// devicePluginOptions are the device plugin's options with the agent's node name and log.
func (o Options) devicePluginOptions(log *slog.Logger) DevicePluginOptions {
	dp := *o.DevicePlugin
	dp.NodeName = o.NodeName
	if dp.Log == nil {
		dp.Log = log
	}
	return dp
}

// withMig fills in the MIG manager from the GPU source when it has one.
func (a *Agent) withMig(dp DevicePluginOptions) DevicePluginOptions {
	if m, ok := a.src.(MigManager); ok && dp.Mig == nil {
		dp.Mig = m
	}
	return dp
}

// Agent scans the node's GPUs, registers them on its Node, tracks their health and serves their usage.
type Agent struct {
	src    GPUSource
	client kubernetes.Interface
	opts   Options
	log    *slog.Logger
	now    func() time.Time

	kick chan struct{}

	mu          sync.Mutex
	gpus        []GPU // last scan, with lost GPUs filled from earlier scans
	settings    Settings
	devices     []codec.DeviceInfo
	value       string
	scanned     bool
	unhealthy   map[string]XIDEvent // sticky until restart
	allLost     *XIDEvent
	cmWarned    string
	noGPUWarned bool
	subs        []chan []codec.DeviceInfo

	usageMu sync.Mutex
	usageAt time.Time
	usage   *UsageReport

	pods     *podResolver
	registry *prometheus.Registry
	metrics  *agentMetrics
}

// New builds an Agent over src. client may be nil in observe mode without pod lookup.
func New(src GPUSource, client kubernetes.Interface, opts Options) (*Agent, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if client == nil && (opts.Mode == RunFull || opts.PodLookup) {
		return nil, errors.New("agent: a Kubernetes client is needed to register or to look pods up")
	}
	if opts.UsageMaxAge < 0 {
		opts.UsageMaxAge = 0
	}
	a := &Agent{
		src: src, client: client, opts: opts, log: opts.Log, now: opts.Now,
		kick:      make(chan struct{}, 1),
		settings:  opts.Settings,
		unhealthy: map[string]XIDEvent{},
	}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	if a.now == nil {
		a.now = time.Now
	}
	a.registry, a.metrics = newRegistry(a)
	return a, nil
}

// Run starts the pod watch, the XID health checks and the HTTP server, then scans (and in full mode registers)
// on start, on change and every RegisterInterval until ctx ends.
func (a *Agent) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ln := a.opts.Listener
	if ln == nil && a.opts.Listen != "" {
		var err error
		if ln, err = net.Listen("tcp", a.opts.Listen); err != nil {
			return fmt.Errorf("cannot serve metrics on %s: %w", a.opts.Listen, err)
		}
	}
	if a.opts.PodLookup && a.client != nil {
		a.pods = startPodResolver(ctx, a.client, a.opts.NodeName)
	}
	var wg sync.WaitGroup
	if a.opts.Settings.DisableHealthChecks {
		a.log.Info("XID health checks are disabled")
	} else if events, err := a.src.Events(ctx); err != nil {
		a.log.Warn("XID health checks are off: GPUs stay healthy unless NVML cannot read them", "err", err)
	} else {
		wg.Go(func() {
			for ev := range events {
				a.HandleEvent(ev)
			}
		})
	}
	errc := make(chan error, 2)
	if a.opts.DevicePlugin != nil {
		if devicePluginFactory == nil {
			return errNoDevicePlugin
		}
		dp, err := devicePluginFactory(a, a.client, a.withMig(a.opts.devicePluginOptions(a.log)))
		if err != nil {
			return err
		}
		wg.Go(func() {
			if err := dp.Run(ctx); err != nil {
				errc <- err
			}
		})
	}
	var srv *http.Server
	if ln != nil {
		srv = &http.Server{Handler: a.Handler(), ReadHeaderTimeout: 10 * time.Second}
		go func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errc <- fmt.Errorf("metrics server: %w", err)
			}
		}()
		a.log.Info("serving", "addr", ln.Addr().String(), "paths", "/metrics /usage /devices /healthz /readyz")
	}
	a.log.Info("agent started", "node", a.opts.NodeName, "mode", a.opts.Mode, "format", a.opts.RegisterFormat,
		"interval", a.opts.RegisterInterval.String())

	var err error
	timer := time.NewTimer(0)
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case err = <-errc:
			break loop
		case <-timer.C:
		case <-a.kick:
		}
		wait := a.opts.RegisterInterval
		if cerr := a.cycle(ctx); cerr != nil {
			if ctx.Err() != nil {
				break loop
			}
			a.log.Warn("scan or registration failed; retrying", "err", cerr, "in", a.opts.RetryInterval.String())
			wait = a.opts.RetryInterval
		}
		timer.Reset(wait)
	}
	timer.Stop()
	cancel()
	if a.opts.DevicePlugin != nil && a.opts.Mode == RunFull {
		a.unregisterAllocator()
	}
	if srv != nil {
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = srv.Shutdown(sctx)
		scancel()
	}
	wg.Wait()
	return err
}

// unregisterAllocator removes codec.NodeAllocatorAnnotation from the Node when the agent stops: until its plugin
// serves kubelet again the node speaks HAMi's lock protocol (safe whichever plugin comes next: this agent again
// rewrites the key, HAMi's device plugin needs the lock).
func (a *Agent) unregisterAllocator() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	nodes := a.client.CoreV1().Nodes()
	node, err := nodes.Get(ctx, a.opts.NodeName, metav1.GetOptions{})
	if err != nil {
		a.log.Warn("cannot read the Node to remove "+codec.NodeAllocatorAnnotation, "err", err)
		return
	}
	if _, has := node.Annotations[codec.NodeAllocatorAnnotation]; !has {
		return
	}
	body, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{codec.NodeAllocatorAnnotation: nil}}})
	if _, err := nodes.Patch(ctx, a.opts.NodeName, types.MergePatchType, body, metav1.PatchOptions{FieldManager: FieldManager}); err != nil {
		a.log.Warn("cannot remove "+codec.NodeAllocatorAnnotation+"; the node's binds skip HAMi's lock until the agent is back", "err", err)
	}
}

// cycle is one scan, plus the registration in full mode.
func (a *Agent) cycle(ctx context.Context) error {
	if a.opts.Mode == RunFull {
		_, err := a.RegisterOnce(ctx)
		return err
	}
	_, err := a.Scan(ctx)
	return err
}

// Kick asks for a scan (and registration) now instead of at the end of the period.
func (a *Agent) Kick() {
	select {
	case a.kick <- struct{}{}:
	default:
	}
}

// Scan reads the GPUs, applies the ConfigMap's settings for this node and rebuilds the registration (without
// writing it). It returns the registration.
func (a *Agent) Scan(ctx context.Context) ([]codec.DeviceInfo, error) {
	settings := a.effectiveSettings(ctx)
	began := a.now()
	gpus, err := a.src.Devices()
	a.metrics.scanSeconds.Set(a.now().Sub(began).Seconds())
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	gpus = fillLost(gpus, a.gpus, a.log)
	a.gpus, a.settings, a.scanned = gpus, settings, true
	devs := DeviceInfos(gpus, settings, a.opts.RegisterFormat == FormatLegacy, a.healthyLocked)
	changed := !slices.EqualFunc(devs, a.devices, deviceInfoEqual)
	a.devices = devs
	if a.opts.RegisterFormat == FormatLegacy {
		a.value = codec.FormatNodeRegisterLegacy(devs)
	} else {
		a.value = codec.FormatNodeRegister(devs)
	}
	if changed {
		for _, ch := range a.subs {
			offerLatest(ch, slices.Clone(devs))
		}
	}
	a.mu.Unlock()
	return devs, nil
}

// fillLost replaces GPUs that could not be read with their last good reading, keeping the error so that they
// register unhealthy.
func fillLost(gpus, prev []GPU, log *slog.Logger) []GPU {
	out := gpus[:0:0]
	for _, g := range gpus {
		if g.Err == nil {
			out = append(out, g)
			continue
		}
		var old *GPU
		for i := range prev {
			if (g.UUID != "" && prev[i].UUID == g.UUID) || (g.UUID == "" && prev[i].Index == g.Index) {
				old = &prev[i]
				break
			}
		}
		log.Warn("cannot read a GPU; it registers unhealthy", "index", g.Index, "uuid", g.UUID, "err", g.Err)
		switch {
		case old != nil:
			keep := *old
			keep.Err = g.Err
			out = append(out, keep)
		case g.UUID != "":
			out = append(out, g)
		}
	}
	return out
}

func deviceInfoEqual(a, b codec.DeviceInfo) bool {
	if a.ID != b.ID || a.Index != b.Index || a.Count != b.Count || a.Devmem != b.Devmem || a.Devcore != b.Devcore ||
		a.Type != b.Type || a.Numa != b.Numa || a.Mode != b.Mode || a.Health != b.Health || len(a.MigProfiles) != len(b.MigProfiles) {
		return false
	}
	for i := range a.MigProfiles {
		p, q := a.MigProfiles[i], b.MigProfiles[i]
		if p.Name != q.Name || p.MemoryMB != q.MemoryMB || p.Core != q.Core || p.SliceCount != q.SliceCount || !slices.Equal(p.Placements, q.Placements) {
			return false
		}
	}
	return true
}

// offerLatest puts v in the one-slot channel ch, replacing a value the reader has not taken yet.
func offerLatest(ch chan []codec.DeviceInfo, v []codec.DeviceInfo) {
	for {
		select {
		case ch <- v:
			return
		default:
		}
		select {
		case <-ch:
		default:
		}
	}
}

// effectiveSettings overlays the ConfigMap's entry for this node on the flag settings. When the ConfigMap cannot
// be read (other than not existing), the last effective settings stay.
func (a *Agent) effectiveSettings(ctx context.Context) Settings {
	base := a.opts.Settings
	if a.opts.ConfigMap == "" || a.client == nil || a.opts.Mode != RunFull {
		return base
	}
	ns, name, _ := strings.Cut(a.opts.ConfigMap, "/")
	cm, err := a.client.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	warn := func(msg string, err error) {
		if s := err.Error(); a.cmWarned != s {
			a.cmWarned = s
			a.log.Warn(msg, "configmap", a.opts.ConfigMap, "err", err)
		}
	}
	switch {
	case apierrors.IsNotFound(err):
		return base
	case err != nil:
		warn("cannot read the per-node ConfigMap; keeping the last settings", err)
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.settings
	}
	s, _, err := ApplyConfigMap(base, cm, a.opts.NodeName)
	if err != nil {
		warn("ignoring the node's entry in the per-node ConfigMap", err)
	}
	return s
}

// RegisterOnce scans and, when the registration differs from the Node's annotation (or, in legacy mode, the
// scheduler asks for a handshake), merge-patches the agent's own Node. It reports whether it patched.
func (a *Agent) RegisterOnce(ctx context.Context) (bool, error) {
	if a.opts.Mode != RunFull {
		return false, errors.New("agent: registration is off in observe mode")
	}
	devs, err := a.Scan(ctx)
	if err != nil {
		a.metrics.registrations.WithLabelValues("error").Inc()
		return false, err
	}
	a.mu.Lock()
	value, gpus := a.value, len(a.gpus)
	a.mu.Unlock()
	if gpus == 0 {
		// Nothing was found (or NVML is not there): writing "[]" would wipe another component's registration.
		if !a.noGPUWarned {
			a.noGPUWarned = true
			a.log.Warn("no GPUs found; not registering")
		}
		a.metrics.registrations.WithLabelValues("skipped").Inc()
		return false, nil
	}
	nodes := a.client.CoreV1().Nodes()
	node, err := nodes.Get(ctx, a.opts.NodeName, metav1.GetOptions{})
	if err != nil {
		a.metrics.registrations.WithLabelValues("error").Inc()
		return false, fmt.Errorf("cannot read Node %s: %w", a.opts.NodeName, err)
	}
	annos := map[string]any{}
	if cur, ok := node.Annotations[codec.NodeRegisterAnnotation]; !ok || cur != value {
		annos[codec.NodeRegisterAnnotation] = value
	}
	// The device-plugin variant tells the scheduler that this node's plugin needs no node lock to find the pod
	// it allocates (codec.NodeAllocatorAnnotation); without it, the key goes: HAMi's plugin needs the lock.
	cur, has := node.Annotations[codec.NodeAllocatorAnnotation]
	switch {
	case a.opts.DevicePlugin != nil && cur != codec.AllocatorKubectlHAMi:
		annos[codec.NodeAllocatorAnnotation] = codec.AllocatorKubectlHAMi
	case a.opts.DevicePlugin == nil && has:
		annos[codec.NodeAllocatorAnnotation] = nil
	}
	if a.opts.RegisterFormat == FormatLegacy {
		// HAMi <= v2.7 schedulers stamp Requesting_<time> and drop the node's GPUs when no `Reported <time>`
		// answers within 60 s; v2.8+ ignore the node side, so JSON mode writes nothing here.
		hs, _ := codec.ParseHandshake(node.Annotations[codec.NodeHandshakeAnnotation])
		if hs.State != codec.HandshakeReported || len(annos) > 0 {
			annos[codec.NodeHandshakeAnnotation] = codec.HandshakeReported + " " + a.now().Format(reportedLayout)
		}
	}
	if len(annos) == 0 {
		a.metrics.registrations.WithLabelValues("unchanged").Inc()
		a.log.Debug("registration unchanged", "gpus", len(devs))
		return false, nil
	}
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annos}})
	if err != nil {
		return false, err
	}
	if _, err := nodes.Patch(ctx, a.opts.NodeName, types.MergePatchType, body, metav1.PatchOptions{FieldManager: FieldManager}); err != nil {
		a.metrics.registrations.WithLabelValues("error").Inc()
		return false, fmt.Errorf("cannot patch Node %s: %w", a.opts.NodeName, err)
	}
	a.metrics.registrations.WithLabelValues("patched").Inc()
	healthy := 0
	for _, d := range devs {
		if d.Health {
			healthy++
		}
	}
	a.log.Info("registered GPUs", "node", a.opts.NodeName, "gpus", len(devs), "healthy", healthy, "format", a.opts.RegisterFormat)
	return true, nil
}

// HandleEvent applies one XID event: an ignored XID is counted and logged; any other marks the GPU (or, for a lost
// GPU NVML cannot name, every GPU) unhealthy until the agent restarts, and triggers a registration at once.
func (a *Agent) HandleEvent(ev XIDEvent) {
	if ev.Time.IsZero() {
		ev.Time = a.now()
	}
	a.mu.Lock()
	ignored := !ev.Lost && a.settings.ignoresXID(ev.XID)
	if !ignored {
		if ev.UUID == "" {
			if a.allLost == nil {
				a.allLost = &ev
			}
		} else if _, seen := a.unhealthy[ev.UUID]; !seen {
			a.unhealthy[ev.UUID] = ev
		}
	}
	a.mu.Unlock()
	action := "unhealthy"
	if ignored {
		action = "ignored"
	}
	xid := fmt.Sprint(ev.XID)
	if ev.Lost {
		xid = "lost"
	}
	a.metrics.xids.WithLabelValues(ev.UUID, xid, action).Inc()
	if ignored {
		a.log.Info("ignoring XID (application error, not a GPU fault)", "uuid", ev.UUID, "xid", ev.XID)
		return
	}
	a.log.Warn("GPU marked unhealthy", "uuid", ev.UUID, "xid", ev.XID, "lost", ev.Lost)
	a.invalidateUsage()
	a.Kick()
}

// healthyLocked reports whether the GPU has seen no critical event. a.mu is held.
func (a *Agent) healthyLocked(uuid string) bool {
	if a.allLost != nil {
		return false
	}
	_, bad := a.unhealthy[uuid]
	return !bad
}

// Devices returns the registration built by the last scan (nil before the first).
func (a *Agent) Devices() []codec.DeviceInfo {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.devices)
}

// Subscribe returns a channel that receives the registration every time a scan changes it. A slow reader only
// sees the latest value. The channel is never closed.
func (a *Agent) Subscribe() <-chan []codec.DeviceInfo {
	ch := make(chan []codec.DeviceInfo, 1)
	a.mu.Lock()
	a.subs = append(a.subs, ch)
	if a.scanned {
		ch <- slices.Clone(a.devices)
	}
	a.mu.Unlock()
	return ch
}

// MemoryScaling is the memory scaling of the last scan's effective settings (flags, then the ConfigMap's entry for
// the node).
func (a *Agent) MemoryScaling() float64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.settings.MemoryScaling
}

// Ready reports whether a scan has succeeded.
func (a *Agent) Ready() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.scanned
}
