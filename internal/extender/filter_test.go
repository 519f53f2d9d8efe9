package extender_test

import (
	"encoding/json"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/extender"
)

// xtFilterCluster has two nodes where an 8000 MiB pod fits, two where it does not for GPU reasons (HAMi's
// per-GPU reason text), and three that fail at node level (unregistered, devices not ready, unknown).
func xtFilterCluster() []runtime.Object {
	mixed := xtGPUs("n-mixed", 2, 16384, 10)
	mixed[0].Health = false
	notReady := xtNode("n-notready", xtGPUs("n-notready", 2, 16384, 10))
	notReady.Status.Allocatable["nvidia.com/gpu"] = resource.MustParse("0")
	// Past HAMi's handshake grace: without a stamp HAMi would stamp the node and still judge its GPUs.
	notReady.Annotations[codec.NodeHandshakeAnnotation] = codec.FormatHandshakeRequesting(newXTClock().Now().Add(-time.Hour))
	return []runtime.Object{
		xtNode("n-fit", xtGPUs("n-fit", 2, 16384, 10)),
		xtNode("n-fit2", xtGPUs("n-fit2", 1, 16384, 10)),
		xtPlaced(xtPod("default", "used-fit2").GPUs(1).GPUMem(4000).GPUCores(10).Obj(), "n-fit2", xtDev("n-fit2", 0, 4000, 10)),
		xtNode("n-mem", xtGPUs("n-mem", 2, 16384, 10)),
		xtPlaced(xtPod("default", "used-mem-0").GPUs(1).GPUMem(12000).GPUCores(10).Obj(), "n-mem", xtDev("n-mem", 0, 12000, 10)),
		xtPlaced(xtPod("default", "used-mem-1").GPUs(1).GPUMem(12000).GPUCores(10).Obj(), "n-mem", xtDev("n-mem", 1, 12000, 10)),
		xtNode("n-mixed", mixed),
		xtPlaced(xtPod("default", "used-mixed").GPUs(1).GPUMem(12000).GPUCores(10).Obj(), "n-mixed", xtDev("n-mixed", 1, 12000, 10)),
		xtNode("n-unreg", nil),
		notReady,
	}
}

var xtFilterCandidates = []string{"n-mem", "n-fit2", "n-unreg", "n-mixed", "n-ghost", "n-fit", "n-notready"}

func xtCheckFilterReasons(t *testing.T, res extenderv1.ExtenderFilterResult) {
	t.Helper()
	if res.Error != "" {
		t.Fatalf("filter error: %s", res.Error)
	}
	wantFailed := map[string]string{
		"n-mem":   "2/2 CardInsufficientMemory",
		"n-mixed": "1/2 CardInsufficientMemory, 1/2 CardNotHealth",
	}
	wantUnresolvable := map[string]string{
		"n-unreg":    "node unregistered", // HAMi's text, pkg/scheduler/scheduler.go:851
		"n-ghost":    "node unregistered",
		"n-notready": string(engine.NodeDevicesNotReady),
	}
	if !maps.Equal(map[string]string(res.FailedNodes), wantFailed) {
		t.Errorf("FailedNodes = %v, want %v", res.FailedNodes, wantFailed)
	}
	if !maps.Equal(map[string]string(res.FailedAndUnresolvableNodes), wantUnresolvable) {
		t.Errorf("FailedAndUnresolvableNodes = %v, want %v", res.FailedAndUnresolvableNodes, wantUnresolvable)
	}
}

func TestFilterNodeNamesReturnsExactlyFeasibleNodesWithHAMiReasons(t *testing.T) {
	e := newXTEnv(t, extender.Options{}, xtFilterCluster()...)
	pod := xtPod("default", "p").GPUs(1).GPUMem(8000).GPUCores(30).Obj()
	names := slices.Clone(xtFilterCandidates)
	var res extenderv1.ExtenderFilterResult
	e.postJSON("/filter", extenderv1.ExtenderArgs{Pod: pod, NodeNames: &names}, &res)
	xtCheckFilterReasons(t, res)
	if res.NodeNames == nil {
		t.Fatalf("NodeNames is nil with nodeCacheCapable: %+v", res)
	}
	if want := []string{"n-fit2", "n-fit"}; !slices.Equal(*res.NodeNames, want) {
		t.Errorf("NodeNames = %v, want %v (every feasible node, in the candidates' order)", *res.NodeNames, want)
	}
	if res.Nodes != nil && len(res.Nodes.Items) > 0 {
		t.Errorf("Nodes set with nodeCacheCapable: %d items", len(res.Nodes.Items))
	}
	// Every candidate is accounted for exactly once.
	seen := map[string]int{}
	for _, n := range *res.NodeNames {
		seen[n]++
	}
	for n := range res.FailedNodes {
		seen[n]++
	}
	for n := range res.FailedAndUnresolvableNodes {
		seen[n]++
	}
	for _, n := range xtFilterCandidates {
		if seen[n] != 1 {
			t.Errorf("candidate %s appears %d times in the answer", n, seen[n])
		}
	}
}

func TestFilterNodesListReturnsExactlyFeasibleNodesWithHAMiReasons(t *testing.T) {
	objs := xtFilterCluster()
	e := newXTEnv(t, extender.Options{}, objs...)
	byName := map[string]*corev1.Node{}
	for _, o := range objs {
		if n, ok := o.(*corev1.Node); ok {
			byName[n.Name] = n
		}
	}
	list := &corev1.NodeList{}
	for _, name := range xtFilterCandidates {
		n := byName[name]
		if n == nil {
			n = xtNode(name, nil) // kube-scheduler knows it, the extender does not
		}
		list.Items = append(list.Items, *n)
	}
	var res extenderv1.ExtenderFilterResult
	e.postJSON("/filter", extenderv1.ExtenderArgs{Pod: xtPod("default", "p").GPUs(1).GPUMem(8000).GPUCores(30).Obj(), Nodes: list}, &res)
	xtCheckFilterReasons(t, res)
	if res.Nodes == nil {
		t.Fatalf("Nodes is nil without nodeCacheCapable: %+v", res)
	}
	var got []string
	for _, n := range res.Nodes.Items {
		got = append(got, n.Name)
		if n.Annotations["hami.io/node-nvidia-register"] == "" {
			t.Errorf("returned node %s lost its annotations: the full objects must come back", n.Name)
		}
	}
	if want := []string{"n-fit2", "n-fit"}; !slices.Equal(got, want) {
		t.Errorf("Nodes = %v, want %v", got, want)
	}
	if res.NodeNames != nil && len(*res.NodeNames) > 0 {
		t.Errorf("NodeNames set without nodeCacheCapable: %v", *res.NodeNames)
	}
}

func TestFilterPodWithoutGPUPassesEveryCandidate(t *testing.T) {
	e := newXTEnv(t, extender.Options{}, xtFilterCluster()...)
	pod := xtPod("default", "cpu-only").Obj()
	pod.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	names := slices.Clone(xtFilterCandidates)
	var res extenderv1.ExtenderFilterResult
	e.postJSON("/filter", extenderv1.ExtenderArgs{Pod: pod, NodeNames: &names}, &res)
	if res.NodeNames == nil || !slices.Equal(*res.NodeNames, xtFilterCandidates) {
		t.Errorf("a pod without GPU resources must pass every node: got %+v", res)
	}
	if len(res.FailedNodes)+len(res.FailedAndUnresolvableNodes) != 0 || res.Error != "" {
		t.Errorf("unexpected failures for a pod without GPU resources: %+v", res)
	}
}

func TestFilterWithoutPodAnswersError(t *testing.T) {
	e := newXTEnv(t, extender.Options{}, xtFilterCluster()...)
	names := []string{"n-fit"}
	var res extenderv1.ExtenderFilterResult
	e.postJSON("/filter", extenderv1.ExtenderArgs{NodeNames: &names}, &res)
	if res.Error == "" {
		t.Errorf("filter without a pod: want an Error, got %+v", res)
	}
	if res.NodeNames != nil && len(*res.NodeNames) > 0 {
		t.Errorf("filter without a pod passed nodes: %v", *res.NodeNames)
	}
}

// xtPrioritizeCluster: three 1-GPU nodes (10 slots, 100 cores, 10000 MiB). p-busy holds three pods of 3000 MiB
// and 30 cores: engine score 10 x (3/10 + 90/100 + 9000/10000) = 21 of 30, so 7 of 10. p-full has no memory
// left for the pod, so it scores 0 whatever the policy.
func xtPrioritizeCluster() []runtime.Object {
	objs := []runtime.Object{
		xtNode("p-empty", xtGPUs("p-empty", 1, 10000, 10)),
		xtNode("p-busy", xtGPUs("p-busy", 1, 10000, 10)),
		xtNode("p-full", xtGPUs("p-full", 1, 10000, 10)),
		xtPlaced(xtPod("default", "full").GPUs(1).GPUMem(10000).GPUCores(0).Obj(), "p-full", xtDev("p-full", 0, 10000, 0)),
	}
	for i := range 3 {
		name := "busy-" + strconv.Itoa(i)
		objs = append(objs, xtPlaced(xtPod("default", name).GPUs(1).GPUMem(3000).GPUCores(30).Obj(), "p-busy", xtDev("p-busy", 0, 3000, 30)))
	}
	return objs
}

func TestPrioritizeMapsEngineScoresToExtenderRange(t *testing.T) {
	e := newXTEnv(t, extender.Options{}, xtPrioritizeCluster()...)
	names := []string{"p-busy", "p-empty", "p-full", "p-ghost"}
	for _, tc := range []struct {
		policy string
		want   map[string]int64
	}{
		{"", map[string]int64{"p-busy": 7, "p-empty": 0, "p-full": 0, "p-ghost": 0}}, // binpack is the default
		{engine.PolicyBinpack, map[string]int64{"p-busy": 7, "p-empty": 0, "p-full": 0, "p-ghost": 0}},
		{engine.PolicySpread, map[string]int64{"p-busy": 3, "p-empty": 10, "p-full": 0, "p-ghost": 0}},
	} {
		t.Run("policy="+tc.policy, func(t *testing.T) {
			pod := xtPod("default", "p").GPUs(1).GPUMem(1000).GPUCores(10).Obj()
			if tc.policy != "" {
				pod.Annotations[engine.AnnoNodePolicy] = tc.policy
			}
			var res extenderv1.HostPriorityList
			e.postJSON("/prioritize", extenderv1.ExtenderArgs{Pod: pod, NodeNames: &names}, &res)
			got := map[string]int64{}
			var order []string
			for _, h := range res {
				got[h.Host] = h.Score
				order = append(order, h.Host)
				if h.Score < 0 || h.Score > extenderv1.MaxExtenderPriority {
					t.Errorf("%s: score %d outside 0..%d", h.Host, h.Score, extenderv1.MaxExtenderPriority)
				}
			}
			if !maps.Equal(got, tc.want) {
				t.Errorf("scores = %v, want %v", got, tc.want)
			}
			if !slices.Equal(order, names) {
				t.Errorf("hosts = %v, want one entry per candidate in order %v", order, names)
			}
		})
	}
	t.Run("nodes list", func(t *testing.T) {
		list := &corev1.NodeList{}
		for _, n := range names {
			list.Items = append(list.Items, *xtNode(n, nil))
		}
		var res extenderv1.HostPriorityList
		e.postJSON("/prioritize", extenderv1.ExtenderArgs{Pod: xtPod("default", "p").GPUs(1).GPUMem(1000).GPUCores(10).Obj(), Nodes: list}, &res)
		got := map[string]int64{}
		for _, h := range res {
			got[h.Host] = h.Score
		}
		if want := map[string]int64{"p-busy": 7, "p-empty": 0, "p-full": 0, "p-ghost": 0}; !maps.Equal(got, want) {
			t.Errorf("scores from a Nodes list = %v, want %v", got, want)
		}
	})
}

func TestMalformedBodiesAnswer400(t *testing.T) {
	e := newXTEnv(t, extender.Options{}, xtFilterCluster()...)
	typed := map[string]string{"/filter": `{"Pod": 12}`, "/prioritize": `{"NodeNames": "n-fit"}`,
		"/bind": `{"PodName": 12}`, "/webhook": `{"request": 12}`}
	for _, path := range []string{"/filter", "/prioritize", "/bind", "/webhook"} {
		for _, body := range []string{"{not json", "", typed[path], "[1,2"} {
			code, out := e.post(path, body)
			if code != http.StatusBadRequest {
				t.Errorf("POST %s %q: status %d (%s), want 400", path, body, code, strings.TrimSpace(string(out)))
			}
		}
	}
	// The server survived all of them.
	if code, _ := e.get("/healthz"); code != http.StatusOK {
		t.Errorf("/healthz after bad input: %d", code)
	}
}

// TestTrailingDataAfterJSONAnswers400: a body that is one JSON value followed by garbage is malformed too;
// decoding only the first value silently accepts it.
func TestTrailingDataAfterJSONAnswers400(t *testing.T) {
	e := newXTEnv(t, extender.Options{}, xtFilterCluster()...)
	names := []string{"n-fit"}
	good, _ := json.Marshal(extenderv1.ExtenderArgs{Pod: xtPod("default", "p").GPUs(1).GPUMem(8000).GPUCores(30).Obj(), NodeNames: &names})
	for _, path := range []string{"/filter", "/prioritize"} {
		for _, body := range []string{string(good) + " trailing garbage", string(good) + `{"Pod":null}`, "null x", string(good) + "\x00garbage"} {
			if code, out := e.post(path, body); code != http.StatusBadRequest {
				t.Errorf("POST %s %.40q...: status %d (%s), want 400", path, body[max(0, len(body)-40):], code, strings.TrimSpace(string(out)))
			}
		}
	}
}

func TestOversizeBodiesAnswer413(t *testing.T) {
	e := newXTEnv(t, extender.Options{MaxBodyBytes: 4096}, xtFilterCluster()...)
	names := make([]string, 2000)
	for i := range names {
		names[i] = "node-with-a-long-name-" + strconv.Itoa(i)
	}
	big, _ := json.Marshal(extenderv1.ExtenderArgs{Pod: xtPod("default", "p").GPUs(1).GPUMem(8000).GPUCores(30).Obj(), NodeNames: &names})
	for _, path := range []string{"/filter", "/prioritize", "/bind", "/webhook"} {
		code, out := e.post(path, big)
		if code != http.StatusRequestEntityTooLarge {
			t.Errorf("POST %s with %d bytes over a 4096-byte limit: status %d (%s), want 413", path, len(big), code, strings.TrimSpace(string(out)))
		}
	}
	// A body under the limit still works.
	small := []string{"n-fit"}
	var res extenderv1.ExtenderFilterResult
	e.postJSON("/filter", extenderv1.ExtenderArgs{Pod: xtPod("default", "p").GPUs(1).GPUMem(8000).GPUCores(30).Obj(), NodeNames: &small}, &res)
	if res.NodeNames == nil || !slices.Equal(*res.NodeNames, small) {
		t.Errorf("small filter after 413s: %+v", res)
	}
}

func TestUnknownPodAndBrokenNodeNeverCrash(t *testing.T) {
	broken := xtNode("n-broken", nil)
	broken.Annotations["hami.io/node-nvidia-register"] = `[{"id":"GPU-x","count":"ten"`
	legacyBroken := xtNode("n-legacy", nil)
	legacyBroken.Annotations["hami.io/node-nvidia-register"] = "GPU-y,10,abc:"
	e := newXTEnv(t, extender.Options{}, broken, legacyBroken, xtNode("n-ok", xtGPUs("n-ok", 1, 16384, 10)))
	names := []string{"n-broken", "n-legacy", "n-ok"}
	var res extenderv1.ExtenderFilterResult
	e.postJSON("/filter", extenderv1.ExtenderArgs{Pod: xtPod("default", "p").GPUs(1).GPUMem(1000).GPUCores(10).Obj(), NodeNames: &names}, &res)
	if res.NodeNames == nil || !slices.Equal(*res.NodeNames, []string{"n-ok"}) {
		t.Errorf("NodeNames = %v, want [n-ok]", res.NodeNames)
	}
	for _, n := range []string{"n-broken", "n-legacy"} {
		if r := res.FailedAndUnresolvableNodes[n]; r != "node unregistered" {
			t.Errorf("node %s with a broken register annotation: unresolvable reason %q, want HAMi's \"node unregistered\" (FailedNodes %v)", n, r, res.FailedNodes)
		}
	}
	// bind for a pod the apiserver does not know
	var br extenderv1.ExtenderBindingResult
	e.postJSON("/bind", extenderv1.ExtenderBindingArgs{PodName: "nope", PodNamespace: "default", PodUID: "u", Node: "n-ok"}, &br)
	if br.Error == "" {
		t.Errorf("bind of an unknown pod: want an error")
	}
	// bind onto a node whose annotation is broken
	pod := xtPod("default", "real").GPUs(1).GPUMem(1000).GPUCores(10).Obj()
	if _, err := e.client.CoreV1().Pods("default").Create(t.Context(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.postJSON("/bind", extenderv1.ExtenderBindingArgs{PodName: "real", PodNamespace: "default", PodUID: pod.UID, Node: "n-broken"}, &br)
	if br.Error == "" || !strings.Contains(br.Error, "NodeUnregistered") {
		t.Errorf("bind onto a node with a broken annotation: error %q, want one naming NodeUnregistered", br.Error)
	}
	// prioritize without a pod answers an empty list, not an error status
	var pr extenderv1.HostPriorityList
	e.postJSON("/prioritize", extenderv1.ExtenderArgs{NodeNames: &names}, &pr)
	if code, _ := e.get("/healthz"); code != http.StatusOK {
		t.Errorf("/healthz: %d", code)
	}
}

func TestReadyzReflectsSyncAndLeadership(t *testing.T) {
	state := extender.NewState(engine.DefaultConfig())
	var leading atomic.Bool
	srv := extender.NewServer(state, nil, extender.Options{IsLeader: leading.Load}, nil, newXTClock().Now)
	e := &xtEnv{t: t, state: state, srv: srv}
	e.http = xtHttptestServer(t, srv.Handler())
	leading.Store(true)
	if code, _ := e.get("/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz before sync: %d, want 503", code)
	}
	if code, _ := e.get("/healthz"); code != http.StatusOK {
		t.Errorf("/healthz before sync: %d, want 200 (alive)", code)
	}
	state.SetSynced()
	if code, body := e.get("/readyz"); code != http.StatusOK {
		t.Errorf("/readyz synced and leading: %d %s, want 200", code, body)
	}
	leading.Store(false)
	if code, _ := e.get("/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz synced, not leading: %d, want 503", code)
	}
	leading.Store(true)
	if code, _ := e.get("/readyz"); code != http.StatusOK {
		t.Errorf("/readyz leading again: %d, want 200", code)
	}
	// Without leader election (IsLeader nil) sync alone decides.
	srv2 := extender.NewServer(state, nil, extender.Options{}, nil, newXTClock().Now)
	e2 := &xtEnv{t: t, state: state, srv: srv2, http: xtHttptestServer(t, srv2.Handler())}
	if code, _ := e2.get("/readyz"); code != http.StatusOK {
		t.Errorf("/readyz without leader election: %d, want 200", code)
	}
}

func TestMetricsExposeHAMiAllocationAndLatency(t *testing.T) {
	objs := []runtime.Object{
		xtNode("m1", xtGPUs("m1", 2, 16384, 10)),
		xtPlaced(xtPod("team", "a").GPUs(1).GPUMem(12000).GPUCores(40).Obj(), "m1", xtDev("m1", 1, 12000, 40)),
		xtQuota("team", "gpu-quota", "limits.nvidia.com/gpumem", "20000"),
	}
	e := newXTEnv(t, extender.Options{}, objs...)
	names := []string{"m1"}
	var res extenderv1.ExtenderFilterResult
	e.postJSON("/filter", extenderv1.ExtenderArgs{Pod: xtPod("team", "p").GPUs(1).GPUMem(1000).GPUCores(10).Obj(), NodeNames: &names}, &res)
	var pr extenderv1.HostPriorityList
	e.postJSON("/prioritize", extenderv1.ExtenderArgs{Pod: xtPod("team", "p").GPUs(1).GPUMem(1000).GPUCores(10).Obj(), NodeNames: &names}, &pr)
	code, body := e.get("/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d", code)
	}
	metric := func(name string, labels ...string) (float64, bool) {
		for _, line := range strings.Split(body, "\n") {
			if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
				continue
			}
			ok := true
			for _, l := range labels {
				ok = ok && strings.Contains(line, l)
			}
			if !ok {
				continue
			}
			v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
			if err != nil {
				t.Fatalf("metric line %q: %v", line, err)
			}
			return v, true
		}
		return 0, false
	}
	if v, ok := metric("hami_gpu_memory_allocated_bytes", `node="m1"`, `device_index="1"`, `device_uuid="GPU-m1-1"`); !ok || v != 12000*1024*1024 {
		t.Errorf("hami_gpu_memory_allocated_bytes for GPU-m1-1 = %v (found %v), want %v", v, ok, 12000*1024*1024)
	}
	if v, ok := metric("hami_gpu_memory_allocated_bytes", `node="m1"`, `device_index="0"`); !ok || v != 0 {
		t.Errorf("hami_gpu_memory_allocated_bytes for GPU-m1-0 = %v (found %v), want 0", v, ok)
	}
	if v, ok := metric("hami_gpu_memory_limit_bytes", `device_uuid="GPU-m1-0"`); !ok || v != 16384*1024*1024 {
		t.Errorf("hami_gpu_memory_limit_bytes = %v (found %v)", v, ok)
	}
	if v, ok := metric("hami_gpu_shared_count", `device_uuid="GPU-m1-1"`); !ok || v != 1 {
		t.Errorf("hami_gpu_shared_count = %v (found %v), want 1", v, ok)
	}
	if v, ok := metric("hami_resource_quota_used", `quota_namespace="team"`); !ok || v != 12000 {
		t.Errorf("hami_resource_quota_used{team} = %v (found %v), want 12000", v, ok)
	}
	for _, verb := range []string{"filter", "prioritize"} {
		if v, ok := metric("kubectl_hami_extender_request_duration_seconds_count", `verb="`+verb+`"`); !ok || v != 1 {
			t.Errorf("latency histogram count for %s = %v (found %v), want 1", verb, v, ok)
		}
		if _, ok := metric("kubectl_hami_extender_request_duration_seconds_bucket", `verb="`+verb+`"`, `le="0.01"`); !ok {
			t.Errorf("latency histogram has no le=0.01 bucket for %s", verb)
		}
	}
	if !strings.Contains(body, "# TYPE kubectl_hami_extender_request_duration_seconds histogram") {
		t.Errorf("the latency metric is not a histogram")
	}
}

// sanity: the two filter modes agree on everything but the node representation.
func TestFilterModesAgree(t *testing.T) {
	e := newXTEnv(t, extender.Options{}, xtFilterCluster()...)
	names := slices.Clone(xtFilterCandidates)
	var a, b extenderv1.ExtenderFilterResult
	e.postJSON("/filter", extenderv1.ExtenderArgs{Pod: xtPod("default", "p").GPUs(2).GPUMem(2000).GPUCores(10).Obj(), NodeNames: &names}, &a)
	list := &corev1.NodeList{}
	for _, n := range names {
		list.Items = append(list.Items, *xtNode(n, nil))
	}
	e.postJSON("/filter", extenderv1.ExtenderArgs{Pod: xtPod("default", "p").GPUs(2).GPUMem(2000).GPUCores(10).Obj(), Nodes: list}, &b)
	var bn []string
	for _, n := range b.Nodes.Items {
		bn = append(bn, n.Name)
	}
	if !slices.Equal(*a.NodeNames, bn) || !reflect.DeepEqual(a.FailedNodes, b.FailedNodes) ||
		!reflect.DeepEqual(a.FailedAndUnresolvableNodes, b.FailedAndUnresolvableNodes) {
		t.Errorf("NodeNames answer %+v differs from Nodes answer %+v", a, b)
	}
	// A 2-GPU pod: n-fit2 has one GPU, so it is NodeInsufficientDevice, which preemption cannot fix.
	if r := a.FailedAndUnresolvableNodes["n-fit2"]; r != string(engine.NodeInsufficientDevice) {
		t.Errorf("n-fit2 for a 2-GPU pod: unresolvable reason %q, want NodeInsufficientDevice", r)
	}
}

// TestPrioritizeReusesTheFilterVerdictOnlyWhileNothingChanged: prioritize right after filter answers from the
// filter's verdict; once the cluster changes (a pod lands on p-empty) or the pod object changes, it evaluates
// again and the scores follow.
func TestPrioritizeReusesTheFilterVerdictOnlyWhileNothingChanged(t *testing.T) {
	e := newXTEnv(t, extender.Options{}, xtPrioritizeCluster()...)
	names := []string{"p-busy", "p-empty", "p-full", "p-ghost"}
	pod := xtPod("default", "p").GPUs(1).GPUMem(1000).GPUCores(10).Obj()
	pod.ResourceVersion = "1"
	scores := func() map[string]int64 {
		t.Helper()
		var res extenderv1.HostPriorityList
		e.postJSON("/prioritize", extenderv1.ExtenderArgs{Pod: pod, NodeNames: &names}, &res)
		got := map[string]int64{}
		for _, h := range res {
			got[h.Host] = h.Score
		}
		return got
	}
	var fr extenderv1.ExtenderFilterResult
	e.postJSON("/filter", extenderv1.ExtenderArgs{Pod: pod, NodeNames: &names}, &fr)
	if got, want := scores(), map[string]int64{"p-busy": 7, "p-empty": 0, "p-full": 0, "p-ghost": 0}; !maps.Equal(got, want) {
		t.Fatalf("after filter: %v, want %v", got, want)
	}
	// A pod lands on p-empty: binpack now scores it above 0, whatever the filter saw.
	e.state.SetPod(xtPlaced(xtPod("default", "other").GPUs(1).GPUMem(3000).GPUCores(30).Obj(), "p-empty", xtDev("p-empty", 0, 3000, 30)), e.clock.Now())
	if got := scores(); got["p-empty"] == 0 {
		t.Errorf("after the cluster changed: %v, want p-empty above 0", got)
	}
	e.postJSON("/filter", extenderv1.ExtenderArgs{Pod: pod, NodeNames: &names}, &fr)
	pod.ResourceVersion = "2" // the pod changed (say, its policy annotation): the stored verdict is not its
	pod.Annotations[engine.AnnoNodePolicy] = engine.PolicySpread
	if got := scores(); got["p-empty"] <= got["p-busy"] {
		t.Errorf("after the pod changed to spread: %v, want the emptier p-empty above p-busy", got)
	}
}
