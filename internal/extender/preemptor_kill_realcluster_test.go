package extender_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/testenv"
)

// TestRealSchedulerExtenderKilledMidPreemption: the shipped binary's serve-extender, as its own process, behind a
// real kube-scheduler. It preempts two low pods for a high one and is killed with SIGKILL once the victims are
// being deleted, before the high pod binds; while it is down the victims go and a low pod arrives that fits the
// freed GPU alone but not beside the high pod. Restarted, it holds the GPU for the high pod from its nomination
// alone. kube-scheduler, though, clears a pod's nomination when an extender call fails (schedule_one.go:
// clearNominatedNode on any error but a FitError): when it retried the high pod during the outage, the hold is
// gone, the low pod may bind first, and the restarted extender preempts it in turn (as kube-scheduler's own
// preemption would). Either way: no GPU is ever over its capacity (sampled throughout), the high pod binds on
// the GPU its victims held, the low pod does not stay beside it, and the hold ends with the bind (a low pod that
// fits beside the high pod binds). A stand-in kubelet finishes the deletion of every pod being deleted.
func TestRealSchedulerExtenderKilledMidPreemption(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts a control plane")
	}
	bin := filepath.Join(t.TempDir(), "kubectl-hami")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/kubectl-hami").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	env := testenv.Start(t)
	c := env.Client
	ctx := context.Background()
	x := &xtSoakExtender{t: t, bin: bin, kcfg: env.Kubeconfig, addr: xtFreeAddr(t), logs: filepath.Join(env.Dir, "serve-extender")}
	x.start()
	t.Cleanup(x.kill)
	env.StartScheduler(t, xtSchedulerConfig("http://"+x.addr))
	xtPriorityClasses(t, c)
	xtCreateNode(t, c, xtNode("node-a", xtGPUs("node-a", 1, 16384, 10)))
	xtCreateEach(t, c, xtGPUPod("lo-1", "low", 8000, "node-a", nil), xtGPUPod("lo-2", "low", 8000, "node-a", nil))
	xtWaitAllocated(t, x.addr, "node-a", 16000)

	xtCreateEach(t, c, xtGPUPod("vip", "high", 12000, "", nil))
	for _, v := range []string{"lo-1", "lo-2"} {
		xtWaitPod(t, c, "default", v, 60*time.Second, func(p *corev1.Pod) bool { return p.DeletionTimestamp != nil })
	}
	// kube-scheduler deletes the victims first and writes the nomination after (its status patch runs apart
	// from the preemption): on a loaded machine the victims are seen terminating before vip is nominated. The
	// victims stay until the stand-in kubelet below, so vip cannot bind meanwhile; wait for either.
	// vip as it stood when the extender was killed: read before the kill, since kube-scheduler's next attempt
	// after it (the victims' deletion retries vip at once) fails on the dead extender and clears the nomination.
	vip := xtWaitPod(t, c, "default", "vip", 30*time.Second, func(p *corev1.Pod) bool {
		return p.Status.NominatedNodeName != "" || p.Spec.NodeName != ""
	})
	x.kill()
	if vip.Status.NominatedNodeName != "node-a" || vip.Spec.NodeName != "" {
		t.Fatalf("vip when the extender was killed: nominated %q, bound %q; want nominated to node-a before its victims went", vip.Status.NominatedNodeName, vip.Spec.NodeName)
	}
	// The kubelet's part, and a low pod that would take the freed GPU.
	for _, v := range []string{"lo-1", "lo-2"} {
		if err := c.CoreV1().Pods("default").Delete(ctx, v, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
			t.Fatal(err)
		}
	}
	xtCreateEach(t, c, xtGPUPod("late", "low", 6000, "", nil))
	time.Sleep(time.Second)
	sampleCtx, stopSampling := context.WithCancel(ctx)
	defer stopSampling()
	most := make(chan int64, 1)
	go func() { // the capacity, sampled: every pod bound to node-a counts, terminating or not
		var peak int64
		defer func() { most <- peak }()
		for sampleCtx.Err() == nil {
			if used, err := xtPlacedMem(c, "node-a"); err == nil {
				peak = max(peak, used)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	go xtStandInKubelet(sampleCtx, c, "default")
	x.start()

	got := xtWaitBound(t, c, "default", "vip", 90*time.Second)
	if got.Spec.NodeName != "node-a" {
		t.Fatalf("vip bound to %s, want node-a", got.Spec.NodeName)
	}
	xtCreateEach(t, c, xtGPUPod("after", "low", 4000, "", nil))
	xtWaitBound(t, c, "default", "after", 60*time.Second) // 12000 + 4000 MiB fit: the hold is over
	late, err := c.CoreV1().Pods("default").Get(ctx, "late", metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		t.Log("kube-scheduler cleared vip's nomination during the outage: late bound first and was preempted for vip")
	case err != nil:
		t.Fatal(err)
	case late.Spec.NodeName != "":
		t.Fatalf("late is bound to %q beside vip: 12000 + 6000 MiB do not fit 16384", late.Spec.NodeName)
	default:
		t.Log("the restarted extender held node-a for vip: late stayed pending")
	}
	stopSampling()
	if peak := <-most; peak > 16384 {
		t.Fatalf("node-a's GPU held %d MiB by the bound pods' placements at one time, over its 16384", peak)
	}
	if used := xtBoundMem(t, c, "node-a"); used != 16000 {
		t.Fatalf("node-a's GPU holds %d MiB by the bound pods' placements, want 16000 (vip and after)", used)
	}
}

// xtStandInKubelet finishes the graceful deletion of every pod of ns being deleted, as a kubelet would once its
// containers stopped, until ctx ends.
func xtStandInKubelet(ctx context.Context, c kubernetes.Interface, ns string) {
	for ctx.Err() == nil {
		if l, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{}); err == nil {
			for _, p := range l.Items {
				if p.DeletionTimestamp != nil {
					uid := p.UID
					_ = c.CoreV1().Pods(ns).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0),
						Preconditions: &metav1.Preconditions{UID: &uid}})
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// xtWaitAllocated waits until the extender process at addr counts mib of GPU memory on the node.
func xtWaitAllocated(t *testing.T, addr, node string, mib int64) {
	t.Helper()
	re := regexp.MustCompile(`(?m)^hami_gpu_memory_allocated_bytes\{[^}]*node="` + regexp.QuoteMeta(node) + `"[^}]*\} (\S+)$`)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if m := re.FindStringSubmatch(string(body)); m != nil {
			if v, err := strconv.ParseFloat(m[1], 64); err == nil && int64(v) == mib*1024*1024 {
				return
			}
		}
	}
	t.Fatalf("the extender does not count %d MiB on %s after 20 s", mib, node)
}

// xtBoundMem adds the GPU memory of every pod bound to the node, from its HAMi placement.
func xtBoundMem(t *testing.T, c kubernetes.Interface, node string) int64 {
	t.Helper()
	sum, err := xtPlacedMem(c, node)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// xtPlacedMem is xtBoundMem for any goroutine.
func xtPlacedMem(c kubernetes.Interface, node string) (int64, error) {
	pods, err := c.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
	if err != nil {
		return 0, err
	}
	var sum int64
	for _, p := range pods.Items {
		pd, err := codec.ParsePodDevices(codec.PodAllocatedAnnotation, p.Annotations[codec.PodAllocatedAnnotation])
		if err != nil {
			return 0, fmt.Errorf("pod %s: %w", p.Name, err)
		}
		for _, ctr := range pd {
			for _, d := range ctr {
				sum += d.UsedMem
			}
		}
	}
	return sum, nil
}
