package usage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	restclient "k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-hami/kubectl-hami/internal/agent/agentapi"
)

const gib = 1 << 30

// body is a /usage answer as the agent writes it (docs/agent.md).
const body = `{
  "node": "gpu-node-7",
  "time": "2026-08-01T10:00:00.123Z",
  "gpus": [
    {"index": 0, "uuid": "GPU-0", "type": "NVIDIA A100-SXM4-80GB", "mode": "hami-core", "healthy": true,
     "registered": true, "memoryUsedBytes": 10737418240, "memoryTotalBytes": 85899345920, "utilization": 0.37,
     "processes": [
       {"pid": 4242, "memoryUsedBytes": 6442450944, "containerID": "3f2a",
        "pod": {"namespace": "ml", "name": "trainer", "uid": "1b2c"}},
       {"pid": 777, "memoryUsedBytes": 1073741824}
     ]},
    {"index": 1, "uuid": "GPU-1", "type": "NVIDIA A100-SXM4-80GB", "mode": "mig", "healthy": false,
     "registered": true, "memoryUsedBytes": 1048575, "memoryTotalBytes": 85899345920, "utilization": null,
     "processes": []},
    {"index": 2, "uuid": "GPU-2", "memoryUsedBytes": 1, "memoryTotalBytes": 2, "utilization": 0.5,
     "processes": [], "error": "nvml: GPU is lost"},
    {"index": 3, "uuid": "", "memoryUsedBytes": 1, "memoryTotalBytes": 2, "processes": []},
    {"index": 4, "uuid": "GPU-4", "memoryUsedBytes": 0, "memoryTotalBytes": 0, "utilization": 1.7, "processes": []}
  ]
}`

func TestDecodeAndMap(t *testing.T) {
	r, err := Decode([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if r.Node != "gpu-node-7" || len(r.GPUs) != 5 || len(r.GPUs[0].Processes) != 2 {
		t.Fatalf("decoded %+v", r)
	}
	p := r.GPUs[0].Processes[0]
	if p.Pod == nil || *p.Pod != (agentapi.PodRef{Namespace: "ml", Name: "trainer", UID: "1b2c"}) || p.PID != 4242 || p.MemoryUsedBytes != 6*gib {
		t.Errorf("process %+v", p)
	}
	got := MapReport("from-the-pod", r)
	want := map[string]GPU{
		"GPU-0": {Node: "gpu-node-7", Index: 0, UsedMiB: 10240, TotalMiB: 81920, Utilization: 37, Healthy: true},
		"GPU-1": {Node: "gpu-node-7", Index: 1, UsedMiB: 0, TotalMiB: 81920, Utilization: -1},
		"GPU-4": {Node: "gpu-node-7", Index: 4, Utilization: 100},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("MapReport:\n got %+v\nwant %+v", got, want)
	}
	r.Node = ""
	if g := MapReport("from-the-pod", r)["GPU-0"]; g.Node != "from-the-pod" {
		t.Errorf("a report without a node takes the pod's: %+v", g)
	}
	if len(MapReport("x", nil)) != 0 {
		t.Error("a nil report maps to GPUs")
	}
}

func TestDecodeRejects(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{"", "empty body"},
		{"<html><body>502 Bad Gateway</body></html>", `invalid character '<'`},
		{`{"status":"ok"}`, `no "gpus" field`},
		{`[1,2]`, "cannot unmarshal array"},
		{`{"gpus": [{"index": "zero"}]}`, "cannot unmarshal string"},
		{`{"gpus": [{"memoryUsedBytes": -1}]}`, "cannot unmarshal number -1"},
		{`{"gpus": 7}`, "cannot unmarshal number"},
	} {
		_, err := Decode([]byte(c.body))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "the answer is not a usage report") {
			t.Errorf("Decode(%q) = %v, want an error with %q", c.body, err, c.want)
		}
	}
	if r, err := Decode([]byte(`{"node":"n","gpus":[]}`)); err != nil || len(r.GPUs) != 0 {
		t.Errorf("a node without GPUs: %v %v", r, err)
	}
	long := strings.Repeat("é", 200)
	if _, err := Decode([]byte(long)); err == nil || !strings.Contains(err.Error(), "…") || strings.Contains(err.Error(), "\ufffd") {
		t.Errorf("a long body is not cut on a character boundary: %v", err)
	}
}

func TestPercent(t *testing.T) {
	for _, c := range []struct {
		in   *float64
		want int
	}{{nil, -1}, {ptr(0), 0}, {ptr(0.005), 1}, {ptr(0.994), 99}, {ptr(1), 100}, {ptr(-3), 0}, {ptr(42), 100}} {
		if got := Percent(c.in); got != c.want {
			t.Errorf("Percent(%v) = %d, want %d", c.in, got, c.want)
		}
	}
}

func ptr(f float64) *float64 { return &f }

func pod(name, node string, phase corev1.PodPhase, ip string, age time.Duration, mods ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: DefaultNamespace, Name: name, Labels: map[string]string{"app.kubernetes.io/name": "kubectl-hami-agent"},
			CreationTimestamp: metav1.NewTime(time.Date(2026, 8, 1, 10, 0, 0, 0, time.UTC).Add(-age))},
		Spec:   corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "agent"}}},
		Status: corev1.PodStatus{Phase: phase, PodIP: ip},
	}
	for _, m := range mods {
		m(p)
	}
	return p
}

func readyPod(p *corev1.Pod) {
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
}

func TestPickPods(t *testing.T) {
	now := metav1.Now()
	pods := []corev1.Pod{
		*pod("old", "a", corev1.PodRunning, "10.0.0.1", time.Hour, readyPod, func(p *corev1.Pod) { p.DeletionTimestamp = &now }),
		*pod("new", "a", corev1.PodRunning, "10.0.0.2", time.Minute),
		*pod("pending", "b", corev1.PodPending, "", 0),
		*pod("running", "b", corev1.PodRunning, "10.0.0.3", time.Hour),
		*pod("ready-old", "c", corev1.PodRunning, "10.0.0.4", time.Hour, readyPod),
		*pod("unready-new", "c", corev1.PodRunning, "10.0.0.5", time.Minute),
		*pod("older", "d", corev1.PodRunning, "10.0.0.6", time.Hour, readyPod),
		*pod("newer", "d", corev1.PodRunning, "10.0.0.7", time.Minute, readyPod),
		*pod("unscheduled", "", corev1.PodPending, "", 0),
	}
	var got []string
	for _, p := range PickPods(pods) {
		got = append(got, p.Spec.NodeName+"="+p.Name)
	}
	if want := []string{"a=new", "b=running", "c=ready-old", "d=newer"}; !reflect.DeepEqual(got, want) {
		t.Errorf("PickPods = %v, want %v", got, want)
	}
	if len(PickPods(nil)) != 0 {
		t.Error("no pods")
	}
}

// rawResponse answers a fake proxy request.
type rawResponse struct {
	body []byte
	err  error
	wait time.Duration
}

func (r rawResponse) DoRaw(ctx context.Context) ([]byte, error) {
	if r.wait > 0 {
		select {
		case <-time.After(r.wait):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return r.body, r.err
}

func (r rawResponse) Stream(context.Context) (io.ReadCloser, error) {
	return nil, errors.New("not streamed")
}

var _ restclient.ResponseWrapper = rawResponse{}

// TestFetchPerNodeErrors: every agent is read; the failures stay on their node.
func TestFetchPerNodeErrors(t *testing.T) {
	objs := []runtime.Object{
		pod("agent-a", "gpu-a", corev1.PodRunning, "10.0.0.1", time.Hour, readyPod),
		pod("agent-b", "gpu-b", corev1.PodRunning, "10.0.0.2", time.Hour, func(p *corev1.Pod) {
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "metrics", ContainerPort: 9500}}
		}),
		pod("agent-c", "gpu-c", corev1.PodPending, "", time.Hour),
		pod("agent-d", "gpu-d", corev1.PodRunning, "10.0.0.4", time.Hour),
		pod("agent-e", "gpu-e", corev1.PodRunning, "10.0.0.5", time.Hour),
		pod("agent-f", "gpu-f", corev1.PodRunning, "10.0.0.6", time.Hour),
		// Not an agent: another label.
		pod("other", "gpu-a", corev1.PodRunning, "10.0.0.9", time.Hour, func(p *corev1.Pod) { p.Labels = map[string]string{"app": "x"} }),
	}
	cs := fake.NewClientset(objs...)
	var mu sync.Mutex
	asked := map[string]string{}
	cs.AddProxyReactor("pods", func(a k8stesting.Action) (bool, restclient.ResponseWrapper, error) {
		pa := a.(k8stesting.ProxyGetAction)
		mu.Lock()
		asked[pa.GetName()] = fmt.Sprintf("%s %s %s", pa.GetScheme(), pa.GetPort(), pa.GetPath())
		mu.Unlock()
		switch pa.GetName() {
		case "agent-a":
			return true, rawResponse{body: []byte(strings.Replace(body, "gpu-node-7", "gpu-a", 1))}, nil
		case "agent-b":
			return true, rawResponse{body: []byte(`{"node":"gpu-b","gpus":[{"index":0,"uuid":"GPU-b0","memoryUsedBytes":2147483648,"memoryTotalBytes":4294967296,"utilization":0.5,"processes":[]}]}`)}, nil
		case "agent-d":
			return true, rawResponse{err: errors.New("error trying to reach service: dial tcp 10.0.0.4:9394:\n connect: connection refused")}, nil
		case "agent-e":
			return true, rawResponse{body: []byte("<html>hello</html>")}, nil
		case "agent-f":
			return true, rawResponse{wait: time.Minute}, nil
		}
		return true, nil, errors.New("unexpected pod")
	})
	r, err := Fetch(context.Background(), cs, Options{Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if asked["agent-a"] != "http 9394 /usage" || asked["agent-b"] != "http 9500 /usage" {
		t.Errorf("proxy requests %v", asked)
	}
	if _, ok := asked["agent-c"]; ok {
		t.Error("a Pending agent pod was asked")
	}
	errs := map[string]string{}
	for _, a := range r.Agents {
		errs[a.Node] = a.Pod + ": " + a.Error
	}
	want := map[string]string{
		"gpu-a": "kube-system/agent-a: ",
		"gpu-b": "kube-system/agent-b: ",
		"gpu-c": "kube-system/agent-c: the agent pod is Pending, not Running",
		"gpu-d": "kube-system/agent-d: error trying to reach service: dial tcp 10.0.0.4:9394: connect: connection refused",
		"gpu-e": `kube-system/agent-e: the answer is not a usage report: invalid character '<' looking for beginning of value (body "<html>hello</html>")`,
		"gpu-f": "kube-system/agent-f: no answer within 200ms",
	}
	if !reflect.DeepEqual(errs, want) {
		t.Errorf("agents:\n got %q\nwant %q", errs, want)
	}
	if r.Answered() != 2 || len(r.Failed()) != 4 {
		t.Errorf("answered %d, failed %d", r.Answered(), len(r.Failed()))
	}
	gpus := r.GPUs()
	if g := gpus["GPU-b0"]; g != (GPU{Node: "gpu-b", UsedMiB: 2048, TotalMiB: 4096, Utilization: 50}) {
		t.Errorf("GPU-b0 %+v", g)
	}
	if g := gpus["GPU-0"]; g.Node != "gpu-a" || g.UsedMiB != 10240 {
		t.Errorf("GPU-0 %+v", g)
	}
	if s := r.Summary(); s != "2/6 node agents answered; gpu-c: agent kube-system/agent-c: the agent pod is Pending, not Running (and 3 more)" {
		t.Errorf("Summary = %q", s)
	}
}

func TestFetchNoAgentsAndListErrors(t *testing.T) {
	cs := fake.NewClientset()
	r, err := Fetch(context.Background(), cs, Options{})
	if err != nil || len(r.Agents) != 0 || r.Answered() != 0 || r.Summary() != "no node agents" || len(r.GPUs()) != 0 {
		t.Errorf("no agents: %+v %v", r, err)
	}
	if r.Namespace != DefaultNamespace || r.Selector != DefaultSelector {
		t.Errorf("defaults %q %q", r.Namespace, r.Selector)
	}
	cs.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New(`pods is forbidden: User "dev" cannot list resource "pods"`)
	})
	if _, err := Fetch(context.Background(), cs, Options{Namespace: "gpu-system", Selector: "app=agent"}); err == nil ||
		err.Error() != `cannot list the agent pods (app=agent in gpu-system): pods is forbidden: User "dev" cannot list resource "pods"` {
		t.Errorf("list error: %v", err)
	}
	if _, err := Fetch(context.Background(), cs, Options{Selector: "a in (b"}); err == nil || !strings.Contains(err.Error(), `agent selector "a in (b"`) {
		t.Errorf("bad selector: %v", err)
	}
	if err := (Options{Port: "http"}).Validate(); err == nil {
		t.Error("a port name is accepted")
	}
	var nilResult *Result
	if nilResult.Answered() != 0 || nilResult.Failed() != nil || len(nilResult.GPUs()) != 0 || nilResult.Summary() != "no node agents" {
		t.Error("a nil result")
	}
}

// TestProxyError: the pod proxy's generic client-go message gives way to what the body says.
func TestProxyError(t *testing.T) {
	unavailable := apierrors.NewGenericServerResponse(503, "get", corev1.Resource("pods"), "http:agent-x:9394", "unknown", 0, true)
	forbidden := apierrors.NewGenericServerResponse(403, "get", corev1.Resource("pods"), "http:agent-x:9394", "unknown", 0, true)
	for _, c := range []struct {
		err  error
		body string
		want string
	}{
		{unavailable, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"error trying to reach service: dial tcp 10.0.0.4:9394: connect: connection refused","code":503}`,
			"error trying to reach service: dial tcp 10.0.0.4:9394: connect: connection refused"},
		{unavailable, "cannot read GPU usage: nvml: driver not loaded\n", "cannot read GPU usage: nvml: driver not loaded"},
		{forbidden, `{"kind":"Status","message":"pods \"agent-x\" is forbidden: User \"dev\" cannot get resource \"pods/proxy\"","code":403}`,
			`HTTP 403: pods "agent-x" is forbidden: User "dev" cannot get resource "pods/proxy"`},
		{unavailable, "", unavailable.Error()},
		{errors.New("net/http: TLS handshake timeout"), "", "net/http: TLS handshake timeout"},
	} {
		if got := proxyError(c.err, []byte(c.body)); got != c.want {
			t.Errorf("proxyError(%v, %q) = %q, want %q", c.err, c.body, got, c.want)
		}
	}
}

// TestFetchStoppedByCaller: when the caller's context ends (the UI quits), agents not read yet say the reading
// stopped, not that they failed to answer in time.
func TestFetchStoppedByCaller(t *testing.T) {
	cs := fake.NewClientset(pod("agent-a", "gpu-a", corev1.PodRunning, "10.0.0.1", time.Hour))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r, err := Fetch(ctx, cs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Agents) != 1 || !strings.Contains(r.Agents[0].Error, "the reading stopped") {
		t.Errorf("agents = %+v", r.Agents)
	}
}
