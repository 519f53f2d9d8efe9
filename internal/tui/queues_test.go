package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
	"github.com/kubectl-hami/kubectl-hami/internal/testenv"
)

// demoQueue is a copy of one of the demo's Volcano queues.
func demoQueue(t *testing.T, name string) *unstructured.Unstructured {
	t.Helper()
	for _, q := range demoSnapshot(t).Queues {
		if q.GetName() == name {
			return q.DeepCopy()
		}
	}
	t.Fatalf("the demo has no queue %s", name)
	return nil
}

func setCardQuota(u *unstructured.Unstructured, quota string) {
	a := u.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[codec.CardQuotaAnnotation] = quota
	u.SetAnnotations(a)
}

// applyChanges feeds changes to the model as the live path does (a rebuild's dataMsg), and runs the
// evaluation it starts.
func applyChanges(m *Model, changes ...change) {
	_, cmd := m.Update(dataMsg{m.store.apply(changes, nil)})
	runCmd(m, cmd)
}

func queueOf(m *Model, name string) *QueueView {
	for _, q := range m.data.Queues {
		if q.Queue == name {
			return q
		}
	}
	return nil
}

// TestQueuesViewFollowsQueueUpdates: raising queue serving's card quota changes the Queues view and lets
// inference/reranker-0 (blocked by the card quota) fit; a PodGroup going away takes its waiting line; a
// queue with an unreadable quota says so; a deleted queue goes.
func TestQueuesViewFollowsQueueUpdates(t *testing.T) {
	m := newDemo(t, 100, 30)
	runCmd(m, m.evaluate()) // the verdicts Init asks for after the first frame
	if v := m.verdicts["inference/reranker-0"]; v == nil || v.Fits || v.Card == nil || v.Card.Fits {
		t.Fatalf("reranker-0 should start blocked by the card quota: %+v", v)
	}
	press(m, "6")
	got := screen(m)
	for _, want := range []string{"[6 Queues]", "serving", "H100-80GB-HBM3", "waiting: job ml-research/train-llm", "cannot enqueue"} {
		if !strings.Contains(got, want) {
			t.Errorf("Queues view lacks %q:\n%s", want, got)
		}
	}

	// Raise serving's H100 quota from 2 to 3.
	q := demoQueue(t, "serving")
	setCardQuota(q, `{"NVIDIA-A100-SXM4-80GB":1,"NVIDIA-H100-80GB-HBM3":3}`)
	q.SetResourceVersion("2")
	applyChanges(m, change{kind: kindQueue, key: "serving", obj: q})
	serving := queueOf(m, "serving")
	if serving == nil {
		t.Fatal("queue serving gone")
	}
	for _, c := range serving.Cards {
		if c.Card == "NVIDIA-H100-80GB-HBM3" && (c.Quota != 3 || c.Used != 2) {
			t.Errorf("serving H100: quota %d used %d, want 3 and 2", c.Quota, c.Used)
		}
	}
	if !strings.Contains(lineAfter(screen(m), "serving", "H100-80GB-HBM3"), "3    2    1") {
		t.Errorf("the H100 row of serving does not show quota 3, used 2, left 1:\n%s", screen(m))
	}
	// The card quota no longer holds reranker-0 back: the next gate (the namespace's ResourceQuota) decides.
	if v := m.verdicts["inference/reranker-0"]; !cardUnblocked(v) {
		t.Errorf("reranker-0 should pass the card quota once it is raised: %+v", v)
	}
	press(m, ":", "pending reranker", "enter")
	if got := screen(m); !strings.Contains(got, "reranker-0") || strings.Contains(got, "QueueCardQuotaNotFit") {
		t.Errorf("the Pending view still shows reranker-0 blocked by the card quota:\n%s", got)
	}

	// The waiting job goes with its PodGroup.
	press(m, "6")
	applyChanges(m, change{kind: kindPodGroup, key: "ml-research/train-llm"})
	if got := screen(m); strings.Contains(got, "train-llm") {
		t.Errorf("deleted PodGroup still waiting on screen:\n%s", got)
	}

	// An unreadable quota is shown, nothing panics; an object of the wrong type is ignored.
	bad := demoQueue(t, "research")
	setCardQuota(bad, `{"NVIDIA-A100-SXM4-80GB":`)
	bad.SetResourceVersion("3")
	applyChanges(m, change{kind: kindQueue, key: "research", obj: bad}, change{kind: kindQueue, key: "odd", obj: "not a queue"},
		change{kind: kindPodGroup, key: "x/odd", obj: 42})
	if got := screen(m); !strings.Contains(got, "cannot be read") {
		t.Errorf("the unreadable quota of research is not shown:\n%s", got)
	}

	// Deleting every queue leaves "no Volcano queues".
	applyChanges(m, change{kind: kindQueue, key: "research"}, change{kind: kindQueue, key: "serving"})
	if got := screen(m); !strings.Contains(got, "no Volcano queues") {
		t.Errorf("no queues left, but the view does not say so:\n%s", got)
	}
	checkScreen(t, m, screen(m))
}

// lineAfter is the first line of s at or below the line holding anchor that holds want.
func lineAfter(s, anchor, want string) string {
	seen := false
	for _, l := range strings.Split(s, "\n") {
		seen = seen || strings.Contains(l, anchor)
		if seen && strings.Contains(l, want) {
			return l
		}
	}
	return ""
}

// TestQueuesViewWithoutVolcano: a cluster without Volcano says so in the Queues view.
func TestQueuesViewWithoutVolcano(t *testing.T) {
	s := demoSnapshot(t)
	s.Queues, s.PodGroups, s.Volcano = nil, nil, false
	m, err := New(Options{Snapshot: s, DeviceConfigMap: snapshot.DefaultDeviceConfigMap, Now: func() time.Time { return fixedNow }, NoColor: true})
	if err != nil {
		t.Fatal(err)
	}
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	press(m, "6")
	got := screen(m)
	if !strings.Contains(got, "no Volcano queues: the cluster has no Queue CRD") {
		t.Errorf("Queues view without Volcano:\n%s", got)
	}
	checkScreen(t, m, got)
}

// TestQueueDrillAndCardSections: enter on a queue lists its pending pods; why-pending of reranker-0 shows
// the card quota table; the what-if form's card and queue fields reach the hypothetical pod, and a bad card
// name is reported.
func TestQueueDrillAndCardSections(t *testing.T) {
	m := newDemo(t, 120, 40)
	press(m, "6", "down", "enter")
	if viewName(m) != "Pending" || viewOf[*pendingView](m).t.filter != "queue=serving" {
		t.Fatalf("enter on serving: view %v filter %q", viewName(m), viewOf[*pendingView](m).t.filter)
	}
	if got := screen(m); !strings.Contains(got, "reranker-0") || strings.Contains(got, "llm-serve-2") {
		t.Errorf("pending pods of queue serving:\n%s", got)
	}
	press(m, "enter")
	for _, want := range []string{"Card quota (Volcano queue serving", "NVIDIA-H100-80GB-HBM3   nvidia.com/gpu   2      2       1", "no quota left"} {
		if !strings.Contains(viewOf[*verdictPage](m).text, want) {
			t.Errorf("why-pending of reranker-0 lacks %q:\n%s", want, viewOf[*verdictPage](m).text)
		}
	}

	press(m, "5", "enter", "tab", "tab", "tab", "tab", "A||B")
	if !strings.Contains(m.form().err, `card "A||B"`) {
		t.Errorf("bad card name: error %q", m.form().err)
	}
	press(m, "ctrl+u", " NVIDIA-H100-80GB-HBM3 | NVIDIA-A100-SXM4-80GB ", "tab", "serving")
	pod, err := m.form().pod(m.world.config())
	if err != nil {
		t.Fatal(err)
	}
	if got := pod.Annotations[codec.CardNameAnnotation]; got != "NVIDIA-H100-80GB-HBM3|NVIDIA-A100-SXM4-80GB" {
		t.Errorf("card annotation %q", got)
	}
	if got := pod.Annotations[codec.QueueNameAnnotation]; got != "serving" {
		t.Errorf("queue annotation %q", got)
	}
	if m.form().err != "" {
		t.Fatalf("form error: %s", m.form().err)
	}
	if !strings.Contains(m.form().text, "lands on gpu-a100-02") || !strings.Contains(m.form().text, "Card quota (Volcano queue serving") {
		t.Errorf("what-if with card alternatives:\n%s", m.form().text)
	}
}

// loadVolcanoInto creates the demo's Volcano queues and PodGroups, status included, in a real apiserver
// that serves their CRDs.
func loadVolcanoInto(t *testing.T, env *testenv.Env) {
	t.Helper()
	s := demoSnapshot(t)
	for _, q := range s.Queues {
		env.CreateWithStatus(t, snapshot.QueueGVR, q)
	}
	for _, g := range s.PodGroups {
		env.CreateWithStatus(t, snapshot.PodGroupGVR, g)
	}
}

// TestLiveVolcanoQueues runs the live path against a real kube-apiserver with Volcano's Queue and PodGroup
// CRDs: the cluster is read as `kubectl hami top` reads it, the informers (typed and dynamic) follow it, and
// raising a queue's card quota, adding a queue and deleting a PodGroup reach the Queues view and the
// pending pods' verdicts.
func TestLiveVolcanoQueues(t *testing.T) {
	env := testenv.Start(t)
	env.InstallVolcanoCRDs(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	loadDemoInto(t, ctx, env.Client)
	dyn := env.Dynamic(t)
	loadVolcanoInto(t, env)

	s, err := snapshot.Live(ctx, env.Client, snapshot.LiveOptions{DeviceConfigMap: snapshot.DefaultDeviceConfigMap, Server: env.APIServerURL})
	if err != nil {
		t.Fatal(err)
	}
	if err := snapshot.LiveVolcano(ctx, dyn, s, env.APIServerURL); err != nil {
		t.Fatal(err)
	}
	if !s.Volcano || len(s.Queues) != 2 {
		t.Fatalf("the live read found Volcano %v with %d queues, want 2", s.Volcano, len(s.Queues))
	}
	m, err := New(Options{Snapshot: s, Client: env.Client, Dynamic: dyn, DeviceConfigMap: snapshot.DefaultDeviceConfigMap,
		Now: time.Now, NoColor: true})
	if err != nil {
		t.Fatal(err)
	}
	if !m.watchVolcano {
		t.Fatal("the model does not watch Volcano's objects")
	}
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	if err := watch(ctx, env.Client, snapshot.DefaultDeviceConfigMap, m.queue, m.watchErr); err != nil {
		t.Fatal(err)
	}
	if err := watchVolcano(ctx, dyn, m.queue, m.watchErr); err != nil {
		t.Fatal(err)
	}
	l := newLoop(t, m)
	blocked := func() bool {
		v := m.verdicts["inference/reranker-0"]
		return v != nil && !v.Fits && v.Card != nil && !v.Card.Fits
	}
	l.until("reranker-0 blocked by the card quota", blocked)
	press(m, "6")
	if got := screen(m); !strings.Contains(got, "serving") || !strings.Contains(got, "waiting: job ml-research/train-llm") {
		t.Fatalf("the live Queues view:\n%s", got)
	}

	// Raise serving's H100 quota: the view and reranker-0's verdict follow.
	qi := dyn.Resource(snapshot.QueueGVR)
	serving, err := qi.Get(ctx, "serving", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	setCardQuota(serving, `{"NVIDIA-A100-SXM4-80GB":1,"NVIDIA-H100-80GB-HBM3":3}`)
	if _, err := qi.Update(ctx, serving, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	l.until("reranker-0 past the card quota once it is raised", func() bool { return cardUnblocked(m.verdicts["inference/reranker-0"]) })
	if q := queueOf(m, "serving"); q == nil || !hasCard(q, "NVIDIA-H100-80GB-HBM3", 3) {
		t.Errorf("serving after the update: %+v", q)
	}

	// A new queue appears; a deleted PodGroup takes its waiting line.
	batch := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
		"metadata": map[string]any{"name": "batch", "annotations": map[string]any{codec.CardQuotaAnnotation: `{"NVIDIA-Tesla-T4":4}`}}}}
	if _, err := qi.Create(ctx, batch, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := dyn.Resource(snapshot.PodGroupGVR).Namespace("ml-research").Delete(ctx, "train-llm", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	l.until("queue batch and no waiting job", func() bool {
		got := screen(m)
		return strings.Contains(got, "batch") && strings.Contains(got, "T4") && !strings.Contains(got, "train-llm")
	})
	if err := qi.Delete(ctx, "batch", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	l.until("queue batch gone", func() bool { return queueOf(m, "batch") == nil })
	if m.liveErr != "" {
		t.Errorf("live error: %s", m.liveErr)
	}
}

// cardUnblocked: the card quota fits and is not among the reasons the pod waits.
func cardUnblocked(v *engine.Verdict) bool {
	if v == nil || v.Card == nil || !v.Card.Fits {
		return false
	}
	for _, r := range v.Reasons {
		if r.Code == engine.QueueCardQuotaNotFit {
			return false
		}
	}
	return true
}

func hasCard(q *QueueView, card string, quota int64) bool {
	for _, c := range q.Cards {
		if c.Card == card && c.Listed && c.Quota == quota {
			return true
		}
	}
	return false
}
