package extender_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/testenv"
)

// xtPostBind sends one /bind to the extender with the HTTP client and returns the answer's error text
// ("" when bound); a transport error is returned as "transport: ...".
func xtPostBind(t testing.TB, hc *http.Client, url string, p *corev1.Pod, node string) string {
	t.Helper()
	body, _ := json.Marshal(extenderv1.ExtenderBindingArgs{PodName: p.Name, PodNamespace: p.Namespace, PodUID: p.UID, Node: node})
	resp, err := hc.Post(url+"/bind", "application/json", strings.NewReader(string(body)))
	if err != nil {
		return "transport: " + err.Error()
	}
	defer resp.Body.Close()
	var res extenderv1.ExtenderBindingResult
	if err := json.NewDecoder(resp.Body).Decode(&res); err != nil {
		t.Fatalf("bind %s to %s: status %d: %v", p.Name, node, resp.StatusCode, err)
	}
	return res.Error
}

// xtCreateSynced creates the pod and waits until the extender's informer has it.
func xtCreateSynced(t testing.TB, c kubernetes.Interface, x *xtLiveExtender, p *corev1.Pod) *corev1.Pod {
	t.Helper()
	got, err := c.CoreV1().Pods(p.Namespace).Create(context.Background(), xtLivePod(p), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	xtWaitSynced(t, x, func(*engine.Cluster) bool { return x.State().Pod(got.Namespace, got.Name) != nil })
	return got
}

// xtStateMem is the memory the extender's state counts on GPU 0 of each node.
func xtStateMem(x *xtLiveExtender, nodes ...string) map[string]int64 {
	out := map[string]int64{}
	x.State().Read(func(c *engine.Cluster) {
		for _, n := range nodes {
			if node := c.Node(n); node != nil && len(node.GPUs) > 0 {
				out[n] = node.GPUs[0].UsedMem
			}
		}
	})
	return out
}

// xtWaitStateMem waits until the state's per-node memory is want.
func xtWaitStateMem(t testing.TB, x *xtLiveExtender, want map[string]int64) {
	t.Helper()
	nodes := make([]string, 0, len(want))
	for n := range want {
		nodes = append(nodes, n)
	}
	var got map[string]int64
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		got = xtStateMem(x, nodes...)
		return fmt.Sprint(got) == fmt.Sprint(want), nil
	})
	if err != nil {
		t.Errorf("the extender counts %v MiB per node, want %v", got, want)
	}
}

// TestRealRebindChangesNothing (real apiserver): a second /bind of a bound pod, at once (before the informer
// has the bound pod) and later, to another node and to its own, is refused saying so, and the pod keeps its
// placement: before, it was marked failed and its GPU share given away while it held it.
func TestRealRebindChangesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	t.Parallel()
	env := testenv.Start(t)
	c := env.Client
	xtCreateNode(t, c, xtNode("r1", xtGPUs("r1", 1, 16384, 10)))
	xtCreateNode(t, c, xtNode("r2", xtGPUs("r2", 1, 16384, 10)))
	x := xtStartLiveExtender(t, c, false)
	xtWaitSynced(t, x, func(cl *engine.Cluster) bool { return len(cl.NodeNames()) == 2 })
	p := xtCreateSynced(t, c, x, xtPod("default", "once").GPUs(1).GPUMem(8000).GPUCores(30).Obj())
	hc := &http.Client{Timeout: 30 * time.Second}
	if msg := xtPostBind(t, hc, x.http.URL, p, "r1"); msg != "" {
		t.Fatalf("first bind: %s", msg)
	}
	for _, node := range []string{"r2", "r1"} {
		if msg := xtPostBind(t, hc, x.http.URL, p, node); !strings.Contains(msg, "already bound") || !strings.Contains(msg, "nothing changed") {
			t.Errorf("bind of the bound pod to %s at once: %q, want it refused as already bound", node, msg)
		}
	}
	xtWaitSynced(t, x, func(*engine.Cluster) bool {
		q := x.State().Pod("default", "once")
		return q != nil && q.Spec.NodeName == "r1"
	})
	for _, node := range []string{"r2", "r1"} {
		if msg := xtPostBind(t, hc, x.http.URL, p, node); !strings.Contains(msg, "already bound to node r1") {
			t.Errorf("bind of the bound pod to %s later: %q, want it refused as already bound to r1", node, msg)
		}
	}
	got, err := c.CoreV1().Pods("default").Get(context.Background(), "once", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.NodeName != "r1" {
		t.Fatalf("pod bound to %q, want r1", got.Spec.NodeName)
	}
	xtCheckHAMiAnnotations(t, got)
	if d := got.Annotations[codec.PodAllocatedAnnotation]; !strings.Contains(d, xtUUID("r1", 0)) {
		t.Errorf("devices %q, want r1's GPU", d)
	}
	xtWaitStateMem(t, x, map[string]int64{"r1": 8000, "r2": 0})
	xtCheckNoLocks(t, c)
}

// TestRealConcurrentBindsOfOnePod (real apiserver): two /bind calls for one pod at once, to two nodes, for
// nine pods: exactly one of each pair wins, the pod is bound there with that node's GPU, and the extender
// counts it there (before, the loser's rollback uncounted the winner).
func TestRealConcurrentBindsOfOnePod(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	t.Parallel()
	env := testenv.Start(t)
	c := env.Client
	xtCreateNode(t, c, xtNode("c1", xtGPUs("c1", 1, 81920, 10)))
	xtCreateNode(t, c, xtNode("c2", xtGPUs("c2", 1, 81920, 10)))
	x := xtStartLiveExtender(t, c, false)
	xtWaitSynced(t, x, func(cl *engine.Cluster) bool { return len(cl.NodeNames()) == 2 })
	hc := &http.Client{Timeout: 30 * time.Second}
	const pairs, mem = 9, 4000
	want := map[string]int64{"c1": 0, "c2": 0}
	for i := range pairs {
		p := xtCreateSynced(t, c, x, xtPod("default", fmt.Sprintf("twice-%d", i)).GPUs(1).GPUMem(mem).GPUCores(5).Obj())
		var wg sync.WaitGroup
		msgs := make([]string, 2)
		start := make(chan struct{})
		for j, node := range []string{"c1", "c2"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				msgs[j] = xtPostBind(t, hc, x.http.URL, p, node)
			}()
		}
		close(start)
		wg.Wait()
		winner := ""
		for j, node := range []string{"c1", "c2"} {
			if msgs[j] == "" {
				if winner != "" {
					t.Errorf("%s: both binds won", p.Name)
				}
				winner = node
			} else if !strings.Contains(msgs[j], "already bound") && !strings.Contains(msgs[j], "being bound") {
				t.Errorf("%s: the losing bind to %s says %q, want already or being bound", p.Name, node, msgs[j])
			}
		}
		if winner == "" {
			t.Errorf("%s: no bind won: %q", p.Name, msgs)
			continue
		}
		want[winner] += mem
		got, err := c.CoreV1().Pods("default").Get(context.Background(), p.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Spec.NodeName != winner || got.Annotations[codec.PodNodeAnnotation] != winner ||
			!strings.Contains(got.Annotations[codec.PodAllocatedAnnotation], xtUUID(winner, 0)) {
			t.Errorf("%s: won on %s but bound to %q with %s=%q, devices %q", p.Name, winner, got.Spec.NodeName,
				codec.PodNodeAnnotation, got.Annotations[codec.PodNodeAnnotation], got.Annotations[codec.PodAllocatedAnnotation])
		}
	}
	// Counted where bound, at once and after the informer caught up.
	xtWaitStateMem(t, x, want)
	time.Sleep(500 * time.Millisecond)
	xtWaitStateMem(t, x, want)
	use, bound, _ := xtSumAllocations(t, c, "default")
	xtCheckNoOverbooking(t, use)
	if len(bound) != pairs {
		t.Errorf("%d pods bound, want %d", len(bound), pairs)
	}
	xtCheckNoLocks(t, c)
}

// xtHangBinding holds every POST of a pods/binding until the request's context ends while on is set: an API
// server that does not answer in time.
type xtHangBinding struct {
	rt http.RoundTripper
	on atomic.Bool
}

func (h *xtHangBinding) RoundTrip(r *http.Request) (*http.Response, error) {
	if h.on.Load() && r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/binding") {
		<-r.Context().Done()
		return nil, r.Context().Err()
	}
	return h.rt.RoundTrip(r)
}

// TestRealBindTimeoutRollsBack (real apiserver): kube-scheduler gives up on a bind whose binding hangs (its
// request context ends): the rollback still runs, on its own context, so the pod keeps no placement, the
// node no lock and the extender no count, and the next bind of the pod succeeds (before: "cannot mark bind
// failed: context canceled", the node locked for 5 minutes).
func TestRealBindTimeoutRollsBack(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	t.Parallel()
	env := testenv.Start(t)
	c := env.Client
	hang := &xtHangBinding{}
	cfg := rest.CopyConfig(env.Config)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { hang.rt = rt; return hang }
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	xtCreateNode(t, c, xtNode("t1", xtGPUs("t1", 1, 16384, 10)))
	x := xtStartLiveExtender(t, client, false)
	xtWaitSynced(t, x, func(cl *engine.Cluster) bool { return len(cl.NodeNames()) == 1 })
	p := xtCreateSynced(t, c, x, xtPod("default", "slow").GPUs(1).GPUMem(8000).GPUCores(30).Obj())

	hang.on.Store(true)
	impatient := &http.Client{Timeout: time.Second} // kube-scheduler's httpTimeout, shortened
	if msg := xtPostBind(t, impatient, x.http.URL, p, "t1"); !strings.HasPrefix(msg, "transport:") {
		t.Fatalf("a hanging bind answered %q, want the client to give up", msg)
	}
	hang.on.Store(false)
	var got *corev1.Pod
	var lock string
	err = wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err = c.CoreV1().Pods("default").Get(ctx, "slow", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		n, err := c.CoreV1().Nodes().Get(ctx, "t1", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		lock = n.Annotations[codec.NodeLockAnnotation]
		return got.Annotations[codec.PodNodeAnnotation] == "" && lock == "", nil
	})
	if err != nil {
		t.Fatalf("10 s after the abandoned bind: pod annotations %v, node lock %q; want no placement and no lock", got.Annotations, lock)
	}
	// The Binding carries the placement (Kubernetes 1.35+), so the hung one wrote nothing: no bind-phase at
	// all; had the placement landed, the rollback would have marked it failed.
	if phase := got.Annotations[codec.PodBindPhaseAnnotation]; got.Spec.NodeName != "" || (phase != "" && phase != "failed") || got.Annotations[codec.PodAllocatedAnnotation] != "" {
		t.Errorf("after the rollback: node %q, annotations %v; want unbound, no devices, bind-phase failed or none", got.Spec.NodeName, got.Annotations)
	}
	xtWaitStateMem(t, x, map[string]int64{"t1": 0})
	// kube-scheduler tries again: the pod binds.
	if msg := xtPostBind(t, &http.Client{Timeout: 30 * time.Second}, x.http.URL, p, "t1"); msg != "" {
		t.Fatalf("the bind after the rollback: %s", msg)
	}
	bound := xtWaitBound(t, c, "default", "slow", 10*time.Second)
	xtCheckHAMiAnnotations(t, bound)
	xtWaitStateMem(t, x, map[string]int64{"t1": 8000})
	xtCheckNoLocks(t, c)
}
