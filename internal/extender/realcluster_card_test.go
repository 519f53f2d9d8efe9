package extender_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/extender"
	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
	"github.com/kubectl-hami/kubectl-hami/internal/testenv"
)

// TestRealSchedulerCardQuota: Volcano card-model quota enforced by the extender for pods the real
// kube-scheduler sends it. Queue q1 has one NVIDIA-H200 and one NVIDIA-H800; pods name "H200|H800".
// The first goes to the H200 node (preferred alternative), the second to the H800 node (H200 quota used),
// the third waits with the card quota as its reason; deleting the first (a scale-down) returns its card and
// the third is bound to the H200 node. The 4090 node, not an alternative, is never used.
func TestRealSchedulerCardQuota(t *testing.T) {
	t.Parallel()
	began := time.Now()
	env := testenv.Start(t)
	env.InstallVolcanoCRDs(t)
	dyn := env.Dynamic(t)
	ctx := context.Background()
	queue := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
		"metadata": map[string]any{"name": "q1", "annotations": map[string]any{codec.CardQuotaAnnotation: `{"NVIDIA-H200":1,"NVIDIA-H800":1}`}},
		"spec":     map[string]any{"weight": int64(1)},
	}}
	if _, err := dyn.Resource(snapshot.QueueGVR).Create(ctx, queue, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c := env.Client
	for _, n := range []struct{ name, product string }{{"h200-a", "NVIDIA-H200"}, {"h800-a", "NVIDIA-H800"}, {"rtx-a", "NVIDIA-GeForce-RTX-4090"}} {
		node := xtNode(n.name, xtGPUs(n.name, 2, 80000, 10))
		for k, v := range map[string]string{"nvidia.com/gpu.product": n.product, "nvidia.com/gpu.count": "2", "nvidia.com/gpu.memory": "80000"} {
			node.Labels[k] = v
		}
		xtCreateNode(t, c, node)
	}
	xtCreateNamespace(t, c, "team", nil)

	x := xtStartLiveExtender(t, c, false)
	x.mu.Lock()
	x.dyn = dyn
	x.stopLocked()
	x.start()
	x.mu.Unlock()
	env.StartScheduler(t, xtSchedulerConfig(x.http.URL))
	xtWaitSynced(t, x, func(cl *engine.Cluster) bool { return cl.Queue("q1") != nil && len(cl.NodeNames()) == 3 })

	pod := func(name string) {
		t.Helper()
		p := xtWithAnnos(xtLivePod(xtPod("team", name).GPUs(1).GPUMem(1000).GPUCores(10).Obj()),
			codec.CardNameAnnotation, "NVIDIA-H200|NVIDIA-H800", codec.QueueNameAnnotation, "q1")
		if _, err := c.CoreV1().Pods("team").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pod("a1")
	if got := xtWaitBound(t, c, "team", "a1", 30*time.Second).Spec.NodeName; got != "h200-a" {
		t.Errorf("a1 bound to %s, want h200-a (the preferred alternative)", got)
	}
	xtWaitSynced(t, x, func(cl *engine.Cluster) bool { return cl.Pod("team", "a1") != nil })
	pod("a2")
	if got := xtWaitBound(t, c, "team", "a2", 30*time.Second).Spec.NodeName; got != "h800-a" {
		t.Errorf("a2 bound to %s, want h800-a (the queue's H200 card is taken)", got)
	}
	xtWaitSynced(t, x, func(cl *engine.Cluster) bool { return cl.Pod("team", "a2") != nil })
	pod("a3")
	xtWaitUnschedulable(t, c, "team", "a3", "QueueCardQuotaNotFit")
	ev := xtWaitEvent(t, c, "team", "a3", "FilteringFailed", []string{"queue q1: NVIDIA-H200 1 of 1 used, the pod needs 1"}, 20*time.Second)
	t.Logf("a3 waits: %s", ev.Message)

	// Scale-down: a1 goes, its H200 card returns to the queue and a3 takes it.
	if err := c.CoreV1().Pods("team").Delete(ctx, "a1", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	// kube-scheduler retries a3 on the delete event, possibly before the extender's informer has seen it;
	// a3 would then wait for kube-scheduler's periodic retry (5 minutes). Once the extender has caught up,
	// an update of a3 (as any controller's write would) makes kube-scheduler try it again at once.
	xtWaitSynced(t, x, func(cl *engine.Cluster) bool { return cl.Pod("team", "a1") == nil })
	patch := []byte(`{"metadata":{"annotations":{"test.kubectl-hami/retry":"1"}}}`)
	if _, err := c.CoreV1().Pods("team").Patch(ctx, "a3", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := xtWaitBound(t, c, "team", "a3", 60*time.Second).Spec.NodeName; got != "h200-a" {
		t.Errorf("a3 bound to %s after the scale-down, want h200-a", got)
	}
	pods, err := c.CoreV1().Pods("team").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Spec.NodeName == "rtx-a" {
			t.Errorf("pod %s was bound to rtx-a, which has no card the pod names", p.Name)
		}
	}
	xtCheckNoLocks(t, c)
	t.Logf("done in %s", time.Since(began).Round(time.Millisecond))
}

// cardState is an extender state with an H200 and an H800 node, queue q1 holding its one H200 card (pod
// "held" on h200-a) and one H800 card free.
func cardState(t *testing.T, cfg engine.Config) *extender.State {
	t.Helper()
	st := extender.NewState(cfg)
	for _, n := range []struct{ name, product string }{{"h200-a", "NVIDIA-H200"}, {"h800-a", "NVIDIA-H800"}} {
		node := xtNode(n.name, xtGPUs(n.name, 2, 80000, 10))
		for k, v := range map[string]string{"nvidia.com/gpu.product": n.product, "nvidia.com/gpu.count": "2", "nvidia.com/gpu.memory": "80000"} {
			node.Labels[k] = v
		}
		st.SetNode(node)
	}
	held := xtWithAnnos(xtPlaced(xtPod("team", "held").GPUs(1).GPUMem(1000).GPUCores(10).Obj(), "h200-a", xtDev("h200-a", 0, 1000, 10)),
		codec.CardNameAnnotation, "NVIDIA-H200", codec.QueueNameAnnotation, "q1")
	st.SetPod(held, time.Now())
	// A busy H800 GPU makes binpack prefer h800-a: the card order must still win in prioritize.
	st.SetPod(xtPlaced(xtPod("other", "busy").GPUs(1).GPUMem(60000).GPUCores(50).Obj(), "h800-a", xtDev("h800-a", 0, 60000, 50)), time.Now())
	st.SetVolcano(true)
	st.SetQueue(engine.NewQueue("q1", "Open", map[string]string{codec.CardQuotaAnnotation: `{"NVIDIA-H200":1,"NVIDIA-H800":1}`}))
	st.SetSynced()
	return st
}

func cardServer(t *testing.T, st *extender.State) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(extender.NewServer(st, fake.NewClientset(), extender.DefaultOptions(), nil, time.Now).Handler())
	t.Cleanup(srv.Close)
	return srv
}

// TestCardQuotaFilter: enforce filters out nodes whose card the queue has no quota left for; off shows the
// numbers in why-pending but lets every node through.
func TestCardQuotaFilter(t *testing.T) {
	for _, tt := range []struct {
		mode string
		want []string
	}{{engine.CardQuotaEnforce, []string{"h800-a"}}, {engine.CardQuotaOff, []string{"h200-a", "h800-a"}}} {
		cfg := engine.DefaultConfig()
		cfg.CardQuota = tt.mode
		srv := cardServer(t, cardState(t, cfg))
		p := xtWithAnnos(xtPod("team", "p").GPUs(1).GPUMem(1000).GPUCores(10).Obj(), codec.CardNameAnnotation, "NVIDIA-H200|NVIDIA-H800", codec.QueueNameAnnotation, "q1")
		var res extenderv1.ExtenderFilterResult
		code, body := xtPost(t, srv.URL+"/filter", extenderv1.ExtenderArgs{Pod: p, NodeNames: &[]string{"h200-a", "h800-a"}})
		if code != http.StatusOK || json.Unmarshal(body, &res) != nil || res.NodeNames == nil {
			t.Fatalf("%s: status %d %s", tt.mode, code, body)
		}
		if !reflect.DeepEqual(*res.NodeNames, tt.want) {
			t.Errorf("%s: feasible %v, want %v (failed %v)", tt.mode, *res.NodeNames, tt.want, res.FailedNodes)
		}
		if tt.mode == engine.CardQuotaEnforce && !strings.Contains(res.FailedNodes["h200-a"], "QueueCardQuotaNotFit") {
			t.Errorf("enforce: h200-a reason %q", res.FailedNodes["h200-a"])
		}
	}
}

// TestCardQuotaPrioritize: the first alternative's nodes outrank the second's whatever the node policy says.
func TestCardQuotaPrioritize(t *testing.T) {
	st := cardState(t, engine.DefaultConfig())
	st.SetQueue(engine.NewQueue("q1", "Open", map[string]string{codec.CardQuotaAnnotation: `{"NVIDIA-H200":2,"NVIDIA-H800":1}`}))
	srv := cardServer(t, st)
	p := xtWithAnnos(xtPod("team", "p").GPUs(1).GPUMem(1000).GPUCores(10).Obj(), codec.CardNameAnnotation, "NVIDIA-H200|NVIDIA-H800", codec.QueueNameAnnotation, "q1")
	var res extenderv1.HostPriorityList
	code, body := xtPost(t, srv.URL+"/prioritize", extenderv1.ExtenderArgs{Pod: p, NodeNames: &[]string{"h200-a", "h800-a"}})
	if code != http.StatusOK || json.Unmarshal(body, &res) != nil || len(res) != 2 {
		t.Fatalf("status %d %s", code, body)
	}
	if res[0].Host != "h200-a" || res[0].Score < 6 || res[1].Score > 5 {
		t.Errorf("scores %+v: want h200-a in the 6-10 band, h800-a in 3-5", res)
	}
	// Without alternatives the policy alone decides: binpack prefers the busier h800-a.
	plain := xtPod("team", "plain").GPUs(1).GPUMem(1000).GPUCores(10).Obj()
	code, body = xtPost(t, srv.URL+"/prioritize", extenderv1.ExtenderArgs{Pod: plain, NodeNames: &[]string{"h200-a", "h800-a"}})
	if code != http.StatusOK || json.Unmarshal(body, &res) != nil || res[1].Score <= res[0].Score {
		t.Errorf("plain pod scores %+v (status %d): binpack should prefer h800-a", res, code)
	}
}
