package query

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

// pod is a pod asking for limits, with optional changes.
func pod(limits map[string]string, edit func(*corev1.Pod)) *corev1.Pod {
	l := corev1.ResourceList{}
	for k, v := range limits {
		l[corev1.ResourceName(k)] = resource.MustParse(v)
	}
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Limits: l}}}}}
	if edit != nil {
		edit(p)
	}
	return p
}

func TestPendingGPU(t *testing.T) {
	gpu := map[string]string{"nvidia.com/gpu": "1"}
	now := metav1.Now()
	cases := []struct {
		name              string
		pod               *corev1.Pod
		waiting, finished bool
		pending           bool
		gpus              int
	}{
		{"waiting GPU pod", pod(gpu, nil), true, false, true, 1},
		{"two GPUs", pod(map[string]string{"nvidia.com/gpu": "2"}, nil), true, false, true, 2},
		{"bound", pod(gpu, func(p *corev1.Pod) { p.Spec.NodeName = "n1" }), false, false, false, 0},
		{"succeeded", pod(gpu, func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }), false, true, false, 0},
		{"failed", pod(gpu, func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed }), false, true, false, 0},
		{"being deleted", pod(gpu, func(p *corev1.Pod) { p.DeletionTimestamp = &now }), false, false, false, 0},
		{"no GPU", pod(map[string]string{"cpu": "1"}, nil), true, false, false, 0},
		{"a Volcano card without a HAMi GPU", pod(map[string]string{"nvidia.com/mig-1g.10gb": "1"}, func(p *corev1.Pod) {
			p.Annotations = map[string]string{codec.CardNameAnnotation: "NVIDIA-A100/mig-1g.10gb-mixed"}
		}), true, false, true, 0},
	}
	cfg := engine.DefaultConfig()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Waiting(c.pod); got != c.waiting {
				t.Errorf("Waiting = %v, want %v", got, c.waiting)
			}
			if got := Finished(c.pod); got != c.finished {
				t.Errorf("Finished = %v, want %v", got, c.finished)
			}
			req, ok := PendingGPU(c.pod, cfg)
			if ok != c.pending {
				t.Fatalf("PendingGPU = %v, want %v", ok, c.pending)
			}
			if ok && req.TotalGPUs() != c.gpus {
				t.Errorf("GPUs = %d, want %d", req.TotalGPUs(), c.gpus)
			}
		})
	}
	if _, ok := PendingGPU(nil, cfg); ok {
		t.Error("PendingGPU(nil) is pending")
	}
}

func TestEventTime(t *testing.T) {
	t1, t2, t3 := time.Unix(100, 0), time.Unix(200, 0), time.Unix(300, 0)
	cases := []struct {
		name string
		ev   corev1.Event
		want time.Time
	}{
		{"lastTimestamp first", corev1.Event{LastTimestamp: metav1.NewTime(t1), EventTime: metav1.NewMicroTime(t2),
			ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(t3)}}, t1},
		{"then eventTime", corev1.Event{EventTime: metav1.NewMicroTime(t2), ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(t3)}}, t2},
		{"then creation", corev1.Event{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(t3)}}, t3},
		{"none", corev1.Event{}, time.Time{}},
	}
	for _, c := range cases {
		if got := EventTime(&c.ev); !got.Equal(c.want) {
			t.Errorf("%s: EventTime = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestTotals(t *testing.T) {
	a := &engine.Node{Name: "a", Registered: true, GPUs: []engine.GPU{
		{Slots: 10, UsedSlots: 2, TotalMem: 1000, UsedMem: 300, TotalCores: 100, UsedCores: 40},
		{Slots: 5, UsedSlots: 1, TotalMem: 500, UsedMem: 0, TotalCores: 100, UsedCores: 0},
	}}
	b := &engine.Node{Name: "b", Registered: true}
	// A node its HAMi version cannot read keeps its GPUs listed, but none HAMi can use: none counts.
	unreadable := &engine.Node{Name: "c", UnreadableBy: "v2.10", GPUs: a.GPUs}
	cases := []struct {
		node *engine.Node
		want NodeSums
	}{
		{a, NodeSums{Slots: 15, UsedSlots: 3, Mem: 1500, UsedMem: 300, Cores: 200, UsedCores: 40}},
		{b, NodeSums{}},
		{unreadable, NodeSums{}},
	}
	var tot Totals
	for _, c := range cases {
		got := SumNode(c.node)
		if got != c.want {
			t.Errorf("SumNode(%s) = %+v, want %+v", c.node.Name, got, c.want)
		}
		tot.Add(c.node, got, 3)
	}
	want := Totals{Nodes: 3, GPUs: 2, Pods: 9, NodeSums: cases[0].want}
	if tot != want {
		t.Errorf("Totals = %+v, want %+v", tot, want)
	}
}

func TestKubeQuotaUsed(t *testing.T) {
	rq := func(ns, name string, used map[string]string) *corev1.ResourceQuota {
		q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Status: corev1.ResourceQuotaStatus{Used: corev1.ResourceList{}}}
		for k, v := range used {
			q.Status.Used[corev1.ResourceName(k)] = resource.MustParse(v)
		}
		return q
	}
	mem := "limits.nvidia.com/gpumem"
	// Listed against name order: the first by name wins, as the engine ranks a namespace's quotas.
	got := KubeQuotaUsed([]*corev1.ResourceQuota{
		rq("ml", "zz", map[string]string{mem: "1k", "limits.nvidia.com/gpucores": "30"}),
		nil,
		rq("ml", "aa", map[string]string{mem: "48k"}),
		rq("web", "q", map[string]string{"requests.cpu": "500m"}),
	})
	want := map[string]map[string]string{
		"ml":  {mem: "48000", "limits.nvidia.com/gpucores": "30"},
		"web": {"requests.cpu": "500m"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("KubeQuotaUsed = %v, want %v", got, want)
	}
	var order []string
	for _, q := range SortedQuotas([]*corev1.ResourceQuota{rq("web", "a", nil), rq("ml", "zz", nil), nil, rq("ml", "aa", nil)}) {
		order = append(order, q.Namespace+"/"+q.Name)
	}
	if want := []string{"ml/aa", "ml/zz", "web/a"}; !reflect.DeepEqual(order, want) {
		t.Errorf("SortedQuotas = %v, want %v", order, want)
	}
}

func TestKubeChecks(t *testing.T) {
	node := func(name string, taint bool) *corev1.Node {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
			Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{"cpu": resource.MustParse("4"), "pods": resource.MustParse("10")}}}
		if taint {
			n.Spec.Taints = []corev1.Taint{{Key: "gpu", Value: "x", Effect: corev1.TaintEffectNoSchedule}}
		}
		return n
	}
	p := pod(map[string]string{"nvidia.com/gpu": "1"}, nil)
	p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{"cpu": resource.MustParse("1")}
	nodes := []*corev1.Node{node("c", false), node("a", true), node("b", false)}
	res := KubeChecks(p, nodes, func(string) []*corev1.Pod { return nil }, engine.DefaultConfig())
	var names []string
	failed := map[string]bool{}
	for _, r := range res {
		names = append(names, r.Node)
		failed[r.Node] = len(r.Failures) > 0
	}
	if !reflect.DeepEqual(names, []string{"a", "b", "c"}) {
		t.Errorf("nodes %v, want sorted a b c", names)
	}
	if !failed["a"] || failed["b"] || failed["c"] {
		t.Errorf("failures %v: want only the tainted a (nvidia.com/gpu is HAMi's, not the node's allocatable)", failed)
	}
}

func TestPodsByNode(t *testing.T) {
	bound := func(name, node string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{NodeName: node}}
	}
	p1, p2, p3, p4 := bound("p1", "n1"), bound("p2", ""), bound("p3", "n1"), bound("p4", "n2")
	got := PodsByNode([]*corev1.Pod{p1, p2, nil, p3, p4})
	want := map[string][]*corev1.Pod{"n1": {p1, p3}, "n2": {p4}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("PodsByNode = %v, want %v", got, want)
	}
}

func TestWhatIfPod(t *testing.T) {
	kinds := engine.DefaultConfig().Kinds()
	cases := []struct {
		name     string
		in       WhatIfPod
		limits   map[string]int64
		errField string
	}{
		{"NVIDIA with memory and cores", WhatIfPod{Count: 2, Memory: 8000, Cores: 30},
			map[string]int64{"nvidia.com/gpu": 2, "nvidia.com/gpumem": 8000, "nvidia.com/gpucores": 30}, ""},
		{"memory in percent, cores left to HAMi", WhatIfPod{Count: 1, MemoryPercent: 50, Cores: -1},
			map[string]int64{"nvidia.com/gpu": 1, "nvidia.com/gpumem-percentage": 50}, ""},
		{"cores 0 is a request", WhatIfPod{Count: 1, Cores: 0}, map[string]int64{"nvidia.com/gpu": 1, "nvidia.com/gpucores": 0}, ""},
		{"another family", WhatIfPod{Device: "dcu", Count: 1, Memory: 1000, Cores: -1},
			map[string]int64{"hygon.com/dcunum": 1, "hygon.com/dcumem": 1000}, ""},
		{"unknown device", WhatIfPod{Device: "nosuch", Count: 1, Cores: -1}, nil, FieldDevice},
		{"a family without memory", WhatIfPod{Device: "metax", Count: 1, Memory: 1000, Cores: -1}, nil, FieldMemory},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.in.Namespace, c.in.Name = "ml", "what-if"
			p, err := c.in.Pod(kinds)
			if c.errField != "" {
				var fe *FieldError
				if !errors.As(err, &fe) || fe.Field != c.errField {
					t.Fatalf("error %v, want a FieldError on %s", err, c.errField)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int64{}
			for k, v := range p.Spec.Containers[0].Resources.Limits {
				got[string(k)] = v.Value()
			}
			if !reflect.DeepEqual(got, c.limits) {
				t.Errorf("limits %v, want %v", got, c.limits)
			}
			if p.Namespace != "ml" || p.Name != "what-if" || p.Kind != "Pod" {
				t.Errorf("pod %s/%s kind %q", p.Namespace, p.Name, p.Kind)
			}
		})
	}
	// A typo gets the closest types and vendors first, not only the list of every type.
	_, err := WhatIfPod{Device: "hygn", Count: 1, Cores: -1}.Pod(kinds)
	if err == nil || !strings.Contains(err.Error(), `unknown device "hygn": did you mean "hygon"?`) {
		t.Errorf("device hygn: %v, want a did-you-mean hygon", err)
	}
	annos := map[string]string{"a": "b"}
	p, err := WhatIfPod{Count: 1, Cores: -1, Annotations: annos}.Pod(kinds)
	if err != nil {
		t.Fatal(err)
	}
	p.Annotations["a"] = "changed"
	if annos["a"] != "b" {
		t.Error("the pod shares its annotations with the caller's map")
	}
}

func TestNamespaces(t *testing.T) {
	p := func(ns string) *corev1.Pod { return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns}} }
	q := func(ns string) *corev1.ResourceQuota {
		return &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: ns}}
	}
	cases := []struct {
		pods   []*corev1.Pod
		quotas []*corev1.ResourceQuota
		want   []string
	}{
		{nil, nil, []string{}},
		{[]*corev1.Pod{p("b"), nil, p("a"), p("b")}, []*corev1.ResourceQuota{q("c"), nil, q("a")}, []string{"a", "b", "c"}},
	}
	for _, c := range cases {
		if got := Namespaces(c.pods, c.quotas); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Namespaces = %#v, want %#v", got, c.want)
		}
	}
}

// TestKubeChecksLimitsStandForRequests: a container with a CPU limit and no request asks kube-scheduler for the
// limit (the API server's defaulting), so the printed checks say Insufficient cpu where the verdict's gates do
// (the oracle's informative table found 9 pods the printed checks let through, seed 345).
func TestKubeChecksLimitsStandForRequests(t *testing.T) {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "small"},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{"cpu": resource.MustParse("3"), "pods": resource.MustParse("10")}}}
	p := pod(map[string]string{"nvidia.com/gpu": "1", "cpu": "15"}, nil)
	res := KubeChecks(p, []*corev1.Node{n}, nil, engine.DefaultConfig())
	if len(res) != 1 || len(res[0].Failures) != 1 || res[0].Failures[0].Reason != "Insufficient cpu" {
		t.Fatalf("checks %+v: want one failure, Insufficient cpu", res)
	}
	if p.Spec.Containers[0].Resources.Requests != nil {
		t.Error("KubeChecks changed the caller's pod")
	}
}

func TestNamespaceNameError(t *testing.T) {
	for ns, want := range map[string]string{"ml-research": "", "q?": `no namespace can be named "q?"`, "ML": `"ML"`,
		"": "namespace: empty", strings.Repeat("a", 64): "at most 63"} {
		err := NamespaceNameError(ns)
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("NamespaceNameError(%q) = %v, want %q", ns, err, want)
		}
	}
}
