package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
)

// loop runs a model the way a Bubble Tea program does (commands in goroutines, messages back into
// Update), without a terminal, so tests can wait for the model to reach a state.
type loop struct {
	t    *testing.T
	m    *Model
	msgs chan tea.Msg
}

func newLoop(t *testing.T, m *Model) *loop {
	l := &loop{t: t, m: m, msgs: make(chan tea.Msg, 64)}
	l.run(m.Init())
	return l
}

func (l *loop) run(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	go func() {
		msg := cmd()
		if b, ok := msg.(tea.BatchMsg); ok {
			for _, c := range b {
				l.run(c)
			}
			return
		}
		if msg != nil {
			l.msgs <- msg
		}
	}()
}

// until feeds messages to the model until cond holds.
func (l *loop) until(what string, cond func() bool) {
	l.t.Helper()
	deadline := time.After(20 * time.Second)
	for !cond() {
		select {
		case msg := <-l.msgs:
			_, cmd := l.m.Update(msg)
			l.run(cmd)
		case <-deadline:
			l.t.Fatalf("timed out waiting for %s; screen:\n%s", what, screen(l.m))
		}
	}
}

func demoObjects(t *testing.T) (*snapshot.Snapshot, []runtime.Object) {
	s := demoSnapshot(t)
	var objs []runtime.Object
	for _, n := range s.Nodes {
		objs = append(objs, n)
	}
	for _, p := range s.Pods.Slice() {
		objs = append(objs, p)
	}
	for _, q := range s.Quotas {
		objs = append(objs, q)
	}
	for _, c := range s.ConfigMaps {
		objs = append(objs, c)
	}
	return s, objs
}

// gpuPod is a GPU pod; with a node and a GPU it is bound and counted the way HAMi records it.
func gpuPod(ns, name, node, uuid string, mem, cores int64) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, CreationTimestamp: metav1.NewTime(fixedNow)},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "train:1", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
			"nvidia.com/gpu": resource.MustParse("1"), "nvidia.com/gpumem": *resource.NewQuantity(mem, resource.DecimalSI),
			"nvidia.com/gpucores": *resource.NewQuantity(cores, resource.DecimalSI)}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending}}
	if node != "" {
		p.Spec.NodeName = node
		p.Status.Phase = corev1.PodRunning
		p.Annotations = map[string]string{codec.PodNodeAnnotation: node, codec.PodBindPhaseAnnotation: "success",
			codec.PodAllocatedAnnotation: fmt.Sprintf("%s,NVIDIA,%d,%d:;", uuid, mem, cores)}
	}
	return p
}

// TestLiveUpdates: informer events reach the screen (pending pod added, pod bound, pod deleted), through
// the coalescing queue, without any write to the cluster.
func TestLiveUpdates(t *testing.T) {
	s, objs := demoObjects(t)
	cs := fake.NewClientset(objs...)
	m, err := New(Options{Snapshot: s, Client: cs, DeviceConfigMap: snapshot.DefaultDeviceConfigMap, Context: "test-ctx",
		Now: func() time.Time { return fixedNow }, NoColor: true})
	if err != nil {
		t.Fatal(err)
	}
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := watch(ctx, cs, snapshot.DefaultDeviceConfigMap, m.queue, m.watchErr); err != nil {
		t.Fatal(err)
	}
	l := newLoop(t, m)
	first := m.data.Gen
	l.until("the informers' first sync", func() bool { return m.data.Gen > first && m.data.Totals.Pods == 19 })
	if got := screen(m); !strings.Contains(got, "● live") || !strings.Contains(got, "context test-ctx") {
		t.Errorf("header does not say live and the context:\n%s", got)
	}

	if _, err := cs.CoreV1().Pods("team-vision").Create(ctx, gpuPod("team-vision", "new-waiter", "", "", 8000, 10), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	l.until("the new pending pod", func() bool { return m.data.Totals.Pending == 9 && m.verdicts["team-vision/new-waiter"] != nil })
	press(m, "4")
	if got := screen(m); !strings.Contains(got, "new-waiter") || !strings.Contains(got, "9 pending") {
		t.Errorf("pending view does not show the new pod:\n%s", got)
	}

	if _, err := cs.CoreV1().Pods("team-vision").Create(ctx, gpuPod("team-vision", "new-runner", "gpu-t4-02", "GPU-gpu-t4-02-1", 4000, 25), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	l.until("the bound pod on gpu-t4-02", func() bool {
		n := m.nodeByName("gpu-t4-02")
		return n != nil && n.UsedMem == 4000
	})
	press(m, ":", "node gpu-t4-02", "enter")
	if got := screen(m); !strings.Contains(got, "new-runner") || !strings.Contains(got, "4000 MiB") {
		t.Errorf("node detail does not show the new pod:\n%s", got)
	}
	if q := quotaOf(m, "team-vision"); q == nil || q.Status.Memory.Used != 61952+4000 {
		t.Errorf("team-vision quota usage not updated: %+v", q)
	}

	if err := cs.CoreV1().Pods("team-vision").Delete(ctx, "new-runner", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	l.until("the deleted pod gone", func() bool { return m.nodeByName("gpu-t4-02").UsedMem == 0 })
	if strings.Contains(screen(m), "new-runner") {
		t.Errorf("deleted pod still on screen:\n%s", screen(m))
	}

	// Read-only: the UI only listed and watched.
	for _, a := range cs.Actions() {
		switch a.GetVerb() {
		case "list", "watch", "get":
		default:
			if a.GetResource().Resource == "pods" && (a.GetVerb() == "create" || a.GetVerb() == "delete") {
				continue // the test's own writes
			}
			t.Errorf("the UI did %s %s", a.GetVerb(), a.GetResource().Resource)
		}
	}
}

func quotaOf(m *Model, ns string) *QuotaView {
	for _, q := range m.data.Quotas {
		if q.Namespace == ns {
			return q
		}
	}
	return nil
}

// TestQueueCoalesces: a burst of events wakes the UI once and keeps only each object's latest state.
func TestQueueCoalesces(t *testing.T) {
	q := newQueue()
	for i := range 1000 {
		q.put(change{kind: kindPod, key: fmt.Sprintf("ns/p%d", i%10), obj: i})
	}
	if n := len(q.wake); n != 1 {
		t.Errorf("%d wake-ups queued, want 1", n)
	}
	changes, _ := q.drain()
	if len(changes) != 10 {
		t.Fatalf("%d changes, want 10 (one per object)", len(changes))
	}
	for _, c := range changes {
		if v := c.obj.(int); v < 990 {
			t.Errorf("%s kept state %d, want the latest (990-999)", c.key, v)
		}
	}
	if changes, _ := q.drain(); len(changes) != 0 {
		t.Errorf("drain left %d changes", len(changes))
	}
}

// TestBurstIsOneRebuild: events arriving while a rebuild runs are applied by one more rebuild, not one each.
func TestBurstIsOneRebuild(t *testing.T) {
	s, objs := demoObjects(t)
	m, err := New(Options{Snapshot: s, Client: fake.NewClientset(objs...), Now: func() time.Time { return fixedNow }, NoColor: true})
	if err != nil {
		t.Fatal(err)
	}
	builds := 0
	m.Update(wakeMsg{})
	for i := range 50 {
		m.queue.put(change{kind: kindPod, key: "team-vision/burst", obj: gpuPod("team-vision", "burst", "", "", int64(1000+i), 10)})
		m.Update(wakeMsg{}) // a rebuild is running: these only mark the model dirty
	}
	if !m.building || !m.dirty {
		t.Fatalf("building %v dirty %v, want a rebuild running and one more due", m.building, m.dirty)
	}
	for m.building {
		changes, rs := m.queue.drain()
		builds++
		_, cmd := m.Update(dataMsg{m.store.apply(changes, rs)})
		_ = cmd
	}
	if builds != 2 {
		t.Errorf("%d rebuilds for a burst of 50 events, want 2", builds)
	}
	if p := m.store.pods.get(splitKey("team-vision/burst")); p == nil || p.Spec.Containers[0].Resources.Limits.Name("nvidia.com/gpumem", resource.DecimalSI).Value() != 1049 {
		t.Errorf("the latest state of the pod was not applied")
	}
}
