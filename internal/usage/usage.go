// Package usage reads the live GPU usage that the node agents (`kubectl hami agent`) serve on GET /usage, through
// the API server's pod proxy, for `kubectl hami top`.
//
// It finds the agent pods by namespace and label selector, picks one pod per node (spec.nodeName), and reads
// /api/v1/namespaces/<ns>/pods/<pod>:<port>/proxy/usage from each, concurrently and each with its own timeout.
// The body is the agent's own type, agentapi.UsageReport. One agent failing (unreachable, not running, a body that is
// not a usage report) is recorded on its node and never stops the others. It only reads: pods list in the agents'
// namespace and get on pods/proxy, with the caller's credentials. The engine knows nothing of it.
package usage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-hami/kubectl-hami/internal/agent/agentapi"
)

// Defaults: the DaemonSet of deploy/agent.
const (
	DefaultNamespace = "kube-system"
	DefaultSelector  = "app.kubernetes.io/name=kubectl-hami-agent"
	// DefaultPort is the agent's --listen port, used when the pod names no container port "metrics".
	DefaultPort    = "9394"
	DefaultTimeout = 5 * time.Second
	// Path is the agent's JSON usage endpoint.
	Path = "/usage"
)

// Options say where the agents are.
type Options struct {
	// Namespace of the agent pods; empty means DefaultNamespace.
	Namespace string
	// Selector is a label selector of the agent pods; empty means DefaultSelector.
	Selector string
	// Port overrides the port read on each pod (by default its container port named "metrics", else 9394).
	Port string
	// Timeout bounds each agent's answer; 0 means DefaultTimeout.
	Timeout time.Duration
	// Parallel is how many agents are read at once; 0 means 16.
	Parallel int
}

func (o Options) withDefaults() Options {
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	if o.Selector == "" {
		o.Selector = DefaultSelector
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Parallel <= 0 {
		o.Parallel = 16
	}
	return o
}

// Validate checks the selector.
func (o Options) Validate() error {
	o = o.withDefaults()
	if _, err := labels.Parse(o.Selector); err != nil {
		return fmt.Errorf("agent selector %q: %w", o.Selector, err)
	}
	if o.Port != "" {
		if p, err := strconv.Atoi(o.Port); err != nil || p <= 0 || p > 65535 {
			return fmt.Errorf("agent port %q: want a number 1-65535", o.Port)
		}
	}
	return nil
}

// Result is one reading of every agent.
type Result struct {
	Namespace string `json:"namespace"`
	Selector  string `json:"selector"`
	// Time is when the reading started.
	Time time.Time `json:"time"`
	// Agents is one entry per node that has an agent pod, in node name order.
	Agents []Agent `json:"agents"`
	// Simulated is true for the demo's made-up readings (Simulate), never for a real agent's.
	Simulated bool `json:"simulated,omitempty"`
}

// Agent is one node's agent and what it answered.
type Agent struct {
	Node string `json:"node"`
	// Pod is namespace/name of the agent pod read.
	Pod string `json:"pod"`
	// Error says why there is no usage for this node (the pod is not running, the proxy or the agent failed).
	Error string `json:"error,omitempty"`
	// Usage is the agent's GET /usage body, when it answered.
	Usage *agentapi.UsageReport `json:"usage,omitempty"`
}

// Answered is how many agents gave a usage report.
func (r *Result) Answered() int {
	if r == nil {
		return 0
	}
	n := 0
	for _, a := range r.Agents {
		if a.Usage != nil {
			n++
		}
	}
	return n
}

// Failed are the agents without a usage report.
func (r *Result) Failed() []Agent {
	if r == nil {
		return nil
	}
	var out []Agent
	for _, a := range r.Agents {
		if a.Usage == nil {
			out = append(out, a)
		}
	}
	return out
}

// GPU is one GPU's live usage as top shows it.
type GPU struct {
	Node  string
	Index int
	// UsedMiB and TotalMiB are the memory NVML reports, rounded down to MiB.
	UsedMiB, TotalMiB int64
	// Utilization is a percentage 0..100, or -1 when the GPU does not report it (MIG).
	Utilization int
	Healthy     bool
}

// GPUs maps every GPU of the agents that answered by UUID. GPUs the agent could not read (their error set) and
// GPUs without a UUID are left out: top shows them as n/a.
func (r *Result) GPUs() map[string]GPU {
	out := map[string]GPU{}
	if r == nil {
		return out
	}
	for _, a := range r.Agents {
		for uuid, g := range MapReport(a.Node, a.Usage) {
			out[uuid] = g
		}
	}
	return out
}

// MapReport maps one agent's report to its GPUs by UUID; node names them when the report does not.
func MapReport(node string, r *agentapi.UsageReport) map[string]GPU {
	out := map[string]GPU{}
	if r == nil {
		return out
	}
	if r.Node != "" {
		node = r.Node
	}
	for _, g := range r.GPUs {
		if g.UUID == "" || g.Error != "" {
			continue
		}
		out[g.UUID] = GPU{Node: node, Index: g.Index, UsedMiB: int64(g.MemoryUsedBytes >> 20), TotalMiB: int64(g.MemoryTotalBytes >> 20),
			Utilization: Percent(g.Utilization), Healthy: g.Healthy}
	}
	return out
}

// Percent turns the agent's 0..1 utilisation into a whole percentage, -1 when unknown; values outside 0..1 are
// clamped.
func Percent(u *float64) int {
	if u == nil || math.IsNaN(*u) {
		return -1
	}
	return int(math.Round(min(max(*u, 0), 1) * 100))
}

// Decode reads a GET /usage body. A body that is not a JSON object with the report's fields (an HTML error page,
// another program on the port) is an error.
func Decode(body []byte) (*agentapi.UsageReport, error) {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(body, &probe); err != nil {
		return nil, fmt.Errorf("the answer is not a usage report: %s", jsonError(err, body))
	}
	if _, ok := probe["gpus"]; !ok {
		return nil, fmt.Errorf("the answer is not a usage report: no \"gpus\" field (%s)", snippet(body))
	}
	var r agentapi.UsageReport
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("the answer is not a usage report: %s", jsonError(err, body))
	}
	return &r, nil
}

func jsonError(err error, body []byte) string {
	return err.Error() + " (" + snippet(body) + ")"
}

// snippet is the start of a body, on one line, for error messages.
func snippet(body []byte) string {
	s := oneLine(string(body), 80)
	if s == "" {
		return "empty body"
	}
	return "body " + strconv.Quote(s)
}

// Fetch lists the agent pods and reads each node's usage. The error is only for the list itself (no permission,
// an invalid selector, the API server unreachable); every agent's own failure is in its Agent.Error. A cluster
// without agent pods gives a Result without agents.
func Fetch(ctx context.Context, cs kubernetes.Interface, o Options) (*Result, error) {
	o = o.withDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	res := &Result{Namespace: o.Namespace, Selector: o.Selector, Time: time.Now(), Agents: []Agent{}}
	list, err := cs.CoreV1().Pods(o.Namespace).List(ctx, metav1.ListOptions{LabelSelector: o.Selector})
	if err != nil {
		return nil, fmt.Errorf("cannot list the agent pods (%s in %s): %w", o.Selector, o.Namespace, err)
	}
	pods := PickPods(list.Items)
	res.Agents = make([]Agent, len(pods))
	sem := make(chan struct{}, o.Parallel)
	var wg sync.WaitGroup
	for i, p := range pods {
		res.Agents[i] = Agent{Node: p.Spec.NodeName, Pod: p.Namespace + "/" + p.Name}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			r, err := readOne(ctx, cs, p, o)
			if err != nil {
				res.Agents[i].Error = err.Error()
				return
			}
			res.Agents[i].Usage = r
		}()
	}
	wg.Wait()
	return res, nil
}

// readOne reads one pod's /usage through the pod proxy.
func readOne(ctx context.Context, cs kubernetes.Interface, p *corev1.Pod, o Options) (*agentapi.UsageReport, error) {
	if p.DeletionTimestamp != nil {
		return nil, errors.New("the agent pod is terminating")
	}
	if p.Status.Phase != corev1.PodRunning {
		phase := string(p.Status.Phase)
		if phase == "" {
			phase = "not started"
		}
		return nil, fmt.Errorf("the agent pod is %s, not Running", phase)
	}
	if p.Status.PodIP == "" {
		return nil, errors.New("the agent pod has no IP yet")
	}
	parent := ctx
	if parent.Err() != nil {
		return nil, errors.New("the reading stopped before this agent was asked")
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	body, err := cs.CoreV1().Pods(p.Namespace).ProxyGet("http", p.Name, port(p, o), Path, nil).DoRaw(ctx)
	if err != nil {
		if parent.Err() != nil {
			return nil, errors.New("the reading stopped before this agent answered")
		}
		if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("no answer within %s", o.Timeout)
		}
		return nil, errors.New(proxyError(err, body))
	}
	return Decode(body)
}

// proxyError is the reason a proxied request failed. For the pod proxy client-go's message is generic ("the server
// is currently unable to handle the request (get pods http:...)"): the body says more, as a Status from the API
// server ("error trying to reach service: dial tcp ...: connect: connection refused") or as the agent's own text
// ("cannot read GPU usage: ...").
func proxyError(err error, body []byte) string {
	msg := err.Error()
	code := 0
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		code = int(st.Status().Code)
	}
	var s metav1.Status
	if json.Unmarshal(body, &s) == nil && s.Kind == "Status" && s.Message != "" {
		msg = s.Message
	} else if text := strings.TrimSpace(string(body)); text != "" && code != 0 {
		msg = text
	}
	if code != 0 && code != http.StatusServiceUnavailable {
		msg = fmt.Sprintf("HTTP %d: %s", code, msg)
	}
	return oneLine(msg, 200)
}

// port is the port to read: the option, else the pod's container port named "metrics" (the DaemonSet's), else the
// default.
func port(p *corev1.Pod, o Options) string {
	if o.Port != "" {
		return o.Port
	}
	for _, c := range p.Spec.Containers {
		for _, cp := range c.Ports {
			if cp.Name == "metrics" && cp.ContainerPort > 0 {
				return strconv.Itoa(int(cp.ContainerPort))
			}
		}
	}
	return DefaultPort
}

// PickPods keeps one pod per node, the one most likely to answer (during a rolling update a node briefly has an
// old and a new agent): not terminating, then Running with an IP, then Ready, then the newest. Pods not bound to
// a node are left out. The result is in node name order.
func PickPods(pods []corev1.Pod) []*corev1.Pod {
	best := map[string]*corev1.Pod{}
	for i := range pods {
		p := &pods[i]
		n := p.Spec.NodeName
		if n == "" {
			continue
		}
		if cur, ok := best[n]; !ok || better(p, cur) {
			best[n] = p
		}
	}
	out := make([]*corev1.Pod, 0, len(best))
	for _, p := range best {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Spec.NodeName < out[j].Spec.NodeName })
	return out
}

func better(a, b *corev1.Pod) bool {
	for _, f := range []func(*corev1.Pod) bool{
		func(p *corev1.Pod) bool { return p.DeletionTimestamp == nil },
		func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" },
		ready,
	} {
		if fa, fb := f(a), f(b); fa != fb {
			return fa
		}
	}
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return b.CreationTimestamp.Before(&a.CreationTimestamp)
	}
	return a.Name < b.Name
}

func ready(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// oneLine joins s onto one line and cuts it to about n bytes, on a character boundary.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// Summary says in one line how many agents answered and why the first that did not, e.g. "2/3 node agents
// answered; gpu-b: agent kube-system/kubectl-hami-agent-x7k2p: the agent pod is Pending, not Running".
func (r *Result) Summary() string {
	if r == nil || len(r.Agents) == 0 {
		return "no node agents"
	}
	if r.Simulated {
		return SimulatedNote
	}
	s := fmt.Sprintf("%d/%d node agents answered", r.Answered(), len(r.Agents))
	if f := r.Failed(); len(f) > 0 {
		s += fmt.Sprintf("; %s: agent %s: %s", f[0].Node, f[0].Pod, f[0].Error)
		if len(f) > 1 {
			s += fmt.Sprintf(" (and %d more)", len(f)-1)
		}
	}
	return s
}
