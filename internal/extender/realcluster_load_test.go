package extender_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

// xtGPUUse is what bound pods' hami.io/vgpu-devices-allocated add up to on one GPU.
type xtGPUUse struct {
	node             string
	slots            int32
	mem, cores       int64
	pods             []string
	capSlots         int32
	capMem, capCores int64
}

// xtSumAllocations adds up every bound pod's devices per GPU UUID, checking each against the node's register
// annotation, and returns the bound and unbound pods.
func xtSumAllocations(t testing.TB, c kubernetes.Interface, ns string) (map[string]*xtGPUUse, []corev1.Pod, []corev1.Pod) {
	t.Helper()
	ctx := context.Background()
	nodes, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	use := map[string]*xtGPUUse{}
	for _, n := range nodes.Items {
		devs, err := codec.ParseNodeRegister(n.Annotations[codec.NodeRegisterAnnotation])
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range devs {
			use[d.ID] = &xtGPUUse{node: n.Name, capSlots: d.Count, capMem: d.Devmem, capCores: d.Devcore}
		}
	}
	pods, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var bound, pending []corev1.Pod
	for _, p := range pods.Items {
		if p.Spec.NodeName == "" {
			pending = append(pending, p)
			if v := p.Annotations[codec.PodAllocatedAnnotation]; v != "" {
				t.Errorf("pending pod %s carries devices %q", p.Name, v)
			}
			continue
		}
		bound = append(bound, p)
		if p.Annotations[codec.PodNodeAnnotation] != p.Spec.NodeName {
			t.Errorf("pod %s bound to %s carries %s=%q", p.Name, p.Spec.NodeName, codec.PodNodeAnnotation, p.Annotations[codec.PodNodeAnnotation])
		}
		pd, err := codec.ParsePodDevices(codec.PodAllocatedAnnotation, p.Annotations[codec.PodAllocatedAnnotation])
		if err != nil || len(pd) == 0 {
			t.Errorf("bound pod %s: devices-allocated %q: %v", p.Name, p.Annotations[codec.PodAllocatedAnnotation], err)
			continue
		}
		for _, cd := range pd {
			for _, d := range cd {
				u := use[d.UUID]
				if u == nil || u.node != p.Spec.NodeName {
					t.Errorf("pod %s on %s holds GPU %s which is not that node's", p.Name, p.Spec.NodeName, d.UUID)
					continue
				}
				u.slots++
				u.mem += d.UsedMem
				u.cores += d.UsedCores
				u.pods = append(u.pods, p.Name)
			}
		}
	}
	return use, bound, pending
}

// xtCheckNoOverbooking fails for every GPU whose summed slots, memory or cores exceed its capacity.
func xtCheckNoOverbooking(t testing.TB, use map[string]*xtGPUUse) {
	t.Helper()
	for uuid, u := range use {
		if u.slots > u.capSlots || u.mem > u.capMem || u.cores > u.capCores {
			t.Errorf("DOUBLE BOOKING on %s (%s): %d/%d slots, %d/%d MiB, %d/%d cores, pods %v",
				uuid, u.node, u.slots, u.capSlots, u.mem, u.capMem, u.cores, u.capCores, u.pods)
		}
	}
}

// TestRealLoadFillsClusterExactlyAcrossRestart: 10 nodes x 4 GPUs x 4 slots of 16000 MiB; 190 identical pods of
// one share (4000 MiB, 25 cores: exactly a quarter of a GPU in slots, memory and cores) and 10 that fit
// nowhere are created at once. Exactly 160 bind, filling every GPU exactly; the other 40 stay Pending with
// HAMi's reasons. The extender is restarted in the middle.
func TestRealLoadFillsClusterExactlyAcrossRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	const (
		nodes, gpusPerNode, slots = 10, 4, 4
		gpuMem                    = 16000
		fits                      = nodes * gpusPerNode * slots // 160
		sameSize, impossible      = 190, 10
		settleTimeout             = 60 * time.Second
	)
	began := time.Now()
	env, x := xtStartLive(t)
	c := env.Client
	ctx := context.Background()
	for i := range nodes {
		name := fmt.Sprintf("load-%02d", i)
		xtCreateNode(t, c, xtNode(name, xtGPUs(name, gpusPerNode, gpuMem, slots)))
	}
	xtCreateNamespace(t, c, "load", nil)
	xtWaitSynced(t, x, func(cl *engine.Cluster) bool { return len(cl.NodeNames()) == nodes })
	t.Logf("ready in %s", time.Since(began).Round(time.Millisecond))

	var all []*corev1.Pod
	for i := range sameSize {
		all = append(all, xtLivePod(xtPod("load", fmt.Sprintf("share-%03d", i)).GPUs(1).GPUMem(4000).GPUCores(25).Obj()))
	}
	for i := range impossible {
		all = append(all, xtLivePod(xtPod("load", fmt.Sprintf("huge-%02d", i)).GPUs(1).GPUMem(20000).GPUCores(25).Obj()))
	}
	created := time.Now()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 50)
	var createErrs atomic.Int32
	for _, p := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if _, err := c.CoreV1().Pods("load").Create(ctx, p, metav1.CreateOptions{}); err != nil {
				createErrs.Add(1)
				t.Errorf("create %s: %v", p.Name, err)
			}
		}()
	}
	wg.Wait()
	if createErrs.Load() > 0 {
		t.FailNow()
	}
	t.Logf("%d pods created in %s", len(all), time.Since(created).Round(time.Millisecond))

	countBound := func() int {
		l, err := c.CoreV1().Pods("load").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, p := range l.Items {
			if p.Spec.NodeName != "" {
				n++
			}
		}
		return n
	}
	// Restart the extender once a third of the cluster is bound.
	deadline := time.Now().Add(60 * time.Second)
	for countBound() < fits/3 {
		if time.Now().After(deadline) {
			t.Fatalf("only %d pods bound after 60s", countBound())
		}
		time.Sleep(20 * time.Millisecond)
	}
	before := countBound()
	restartAt := time.Now()
	x.restart()
	t.Logf("extender restarted with %d pods bound (%s after the creates), restart took %s",
		before, restartAt.Sub(created).Round(time.Millisecond), time.Since(restartAt).Round(time.Millisecond))

	// Settle: every fitting pod bound and every other one Unschedulable with a HAMi reason.
	var bound, pending []corev1.Pod
	var use map[string]*xtGPUUse
	settled := false
	// 200 pods on 10 nodes: the target is 100 pods bound per second, so a minute is generous.
	for deadline = created.Add(settleTimeout); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		l, err := c.CoreV1().Pods("load").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		nb, reasons := 0, 0
		for _, p := range l.Items {
			if p.Spec.NodeName != "" {
				nb++
			} else if xtUnschedulable(&p, "nodes are available") {
				reasons++
			}
		}
		if nb == fits && reasons == len(all)-fits {
			settled = true
			break
		}
		if nb > fits {
			break
		}
	}
	allBound := time.Since(created)
	use, bound, pending = xtSumAllocations(t, c, "load")
	xtCheckNoOverbooking(t, use)
	if !settled {
		t.Errorf("not settled %s after the creates: %d bound (want %d), %d pending (want %d)", settleTimeout, len(bound), fits, len(pending), len(all)-fits)
	}
	if len(bound) != fits {
		t.Errorf("%d pods bound, want exactly %d (the cluster's capacity)", len(bound), fits)
	}
	// Every GPU is exactly full.
	var notFull []string
	for uuid, u := range use {
		if u.slots != slots || u.mem != gpuMem || u.cores != 100 {
			notFull = append(notFull, fmt.Sprintf("%s %d/%d slots %d MiB %d cores", uuid, u.slots, slots, u.mem, u.cores))
		}
	}
	if len(notFull) > 0 {
		sort.Strings(notFull)
		t.Errorf("%d GPUs are not exactly full although %d pods that fit them are pending: %s", len(notFull), len(pending)-impossible, strings.Join(notFull, "; "))
	}
	// No impossible pod bound; every pending pod says why, in HAMi's words.
	codes := map[string]int{}
	noReason := 0
	for _, p := range bound {
		if strings.HasPrefix(p.Name, "huge-") {
			t.Errorf("impossible pod %s bound to %s", p.Name, p.Spec.NodeName)
		}
		xtCheckHAMiAnnotations(t, &p)
	}
	for _, p := range pending {
		msg := ""
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodScheduled {
				msg = cond.Message
			}
		}
		found := false
		for _, code := range []engine.Code{engine.CardInsufficientMemory, engine.CardTimeSlicingExhausted, engine.CardInsufficientCore} {
			if strings.Contains(msg, string(code)) {
				codes[string(code)]++
				found = true
			}
		}
		if !found {
			noReason++
			if noReason <= 5 {
				t.Errorf("pending pod %s: condition message %q names no HAMi reason", p.Name, msg)
			}
		}
	}
	if noReason > 5 {
		t.Errorf("... and %d more pending pods without a HAMi reason", noReason-5)
	}
	// The restarted extender's state agrees with the annotations.
	var stateMem int64
	x.State().Read(func(cl *engine.Cluster) {
		for _, n := range cl.NodeNames() {
			for _, g := range cl.Node(n).GPUs {
				stateMem += g.UsedMem
			}
		}
	})
	var annotated int64
	for _, u := range use {
		annotated += u.mem
	}
	if want := annotated; stateMem != want {
		t.Errorf("the restarted extender counts %d MiB in use, the annotations %d", stateMem, want)
	}
	xtCheckNoLocks(t, c)
	var rs []string
	for k, v := range codes {
		rs = append(rs, fmt.Sprintf("%s=%d", k, v))
	}
	sort.Strings(rs)
	t.Logf("%d bound, %d pending (%s); all bound %s after the creates; %d restart(s); total %s",
		len(bound), len(pending), strings.Join(rs, " "), allBound.Round(time.Millisecond), x.restarts, time.Since(began).Round(time.Millisecond))
}
