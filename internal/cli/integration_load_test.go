package cli

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-hami/kubectl-hami/examples"
	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
	"github.com/kubectl-hami/kubectl-hami/internal/testenv"
)

// demoCounts is what loadDemo created, for assertions.
type demoCounts struct {
	Namespaces, Nodes, Pods, Running, Quotas, ConfigMaps, Events int
}

// loadDemo creates every object of examples/demo-cluster.yaml in a real apiserver, the way a cluster would
// hold them: namespaces, Nodes with their status (allocatable GPUs), the HAMi device ConfigMap, pods already
// bound (spec.nodeName set at create, as kube-scheduler's binding would leave them) and marked Running where
// the demo says so, ResourceQuotas with their status, and the FailedScheduling events of the pending pods,
// pointing at the pods' real UIDs.
//
// ResourceQuotas are created before the pods, as a cluster holds them, with status.hard set (without a
// kube-controller-manager nobody computes it, and the quota admission plugin refuses pods while it is unknown):
// the admission plugin then charges every pod against the requests.* keys and refuses one the quota does not
// allow, so the demo is one that could exist. What it charged must equal the demo's status.used; the status is
// then set to the demo's figures for every key, which the commands show beside HAMi's own accounting.
func loadDemo(t testing.TB, cs kubernetes.Interface) demoCounts {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := snapshot.Parse(examples.DemoCluster, "demo-cluster.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var n demoCounts

	namespaces := map[string]bool{}
	for _, p := range s.Pods.Slice() {
		namespaces[p.Namespace] = true
	}
	for _, q := range s.Quotas {
		namespaces[q.Namespace] = true
	}
	for _, c := range s.ConfigMaps {
		namespaces[c.Namespace] = true
	}
	for _, e := range s.Events {
		namespaces[e.Namespace] = true
		namespaces[e.InvolvedObject.Namespace] = true
	}
	delete(namespaces, "")
	names := make([]string, 0, len(namespaces))
	for ns := range namespaces {
		names = append(names, ns)
	}
	sort.Strings(names)
	for _, ns := range names {
		_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) { // default and kube-system exist already
			t.Fatalf("create namespace %s: %v", ns, err)
		}
		n.Namespaces++
	}

	for _, want := range s.Nodes {
		node := want.DeepCopy()
		clearServerFields(&node.ObjectMeta)
		node.Status = corev1.NodeStatus{}
		created, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create node %s: %v", want.Name, err)
		}
		created.Status = *want.Status.DeepCopy()
		if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("update status of node %s: %v", want.Name, err)
		}
		n.Nodes++
	}

	for _, want := range s.ConfigMaps {
		cm := want.DeepCopy()
		clearServerFields(&cm.ObjectMeta)
		if _, err := cs.CoreV1().ConfigMaps(cm.Namespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create configmap %s/%s: %v", want.Namespace, want.Name, err)
		}
		n.ConfigMaps++
	}

	for _, want := range s.Quotas {
		q := want.DeepCopy()
		clearServerFields(&q.ObjectMeta)
		q.Status = corev1.ResourceQuotaStatus{}
		created, err := cs.CoreV1().ResourceQuotas(q.Namespace).Create(ctx, q, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create resourcequota %s/%s: %v", want.Namespace, want.Name, err)
		}
		created.Status = corev1.ResourceQuotaStatus{Hard: want.Spec.Hard.DeepCopy(), Used: corev1.ResourceList{}}
		for name := range want.Spec.Hard {
			created.Status.Used[name] = resource.MustParse("0")
		}
		if _, err := cs.CoreV1().ResourceQuotas(q.Namespace).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("update status of resourcequota %s/%s: %v", want.Namespace, want.Name, err)
		}
		n.Quotas++
	}

	uids := map[string]string{} // namespace/name -> the pod's real UID
	for _, want := range s.Pods.Slice() {
		pod := want.DeepCopy()
		clearServerFields(&pod.ObjectMeta)
		pod.Status = corev1.PodStatus{}
		created, err := cs.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create pod %s/%s: %v", want.Namespace, want.Name, err)
		}
		if created.Spec.NodeName != want.Spec.NodeName {
			t.Fatalf("pod %s/%s: the apiserver kept spec.nodeName %q, want %q", want.Namespace, want.Name, created.Spec.NodeName, want.Spec.NodeName)
		}
		uids[want.Namespace+"/"+want.Name] = string(created.UID)
		n.Pods++
		if want.Status.Phase == "" || want.Status.Phase == corev1.PodPending {
			continue
		}
		created.Status.Phase = want.Status.Phase
		if _, err := cs.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("update status of pod %s/%s: %v", want.Namespace, want.Name, err)
		}
		n.Running++
	}

	for _, want := range s.Quotas {
		got, err := cs.CoreV1().ResourceQuotas(want.Namespace).Get(ctx, want.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get resourcequota %s/%s: %v", want.Namespace, want.Name, err)
		}
		for name, used := range want.Status.Used {
			if !strings.HasPrefix(string(name), "requests.") {
				continue // Kubernetes charges extended resources by request only
			}
			if charged := got.Status.Used[name]; charged.Cmp(used) != 0 {
				t.Errorf("resourcequota %s/%s: Kubernetes charged %s %s for the demo's pods, the demo says %s",
					want.Namespace, want.Name, name, charged.String(), used.String())
			}
		}
		got.Status = *want.Status.DeepCopy()
		if _, err := cs.CoreV1().ResourceQuotas(want.Namespace).UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("update status of resourcequota %s/%s: %v", want.Namespace, want.Name, err)
		}
	}

	for _, want := range s.Events {
		ev := want.DeepCopy()
		clearServerFields(&ev.ObjectMeta)
		obj := &ev.InvolvedObject
		if obj.Namespace == "" {
			obj.Namespace = ev.Namespace
		}
		if ev.Namespace == "" {
			ev.Namespace = obj.Namespace
		}
		uid, ok := uids[obj.Namespace+"/"+obj.Name]
		if !ok {
			t.Fatalf("event %s/%s is about pod %s/%s, which the demo does not have", ev.Namespace, ev.Name, obj.Namespace, obj.Name)
		}
		obj.UID = types.UID(uid)
		obj.APIVersion = "v1"
		obj.ResourceVersion = ""
		if _, err := cs.CoreV1().Events(ev.Namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create event %s/%s: %v", ev.Namespace, ev.Name, err)
		}
		n.Events++
	}
	if n.Nodes == 0 || n.Pods == 0 || n.Events == 0 {
		t.Fatalf("the demo cluster looks empty: %+v", n)
	}
	return n
}

// clearServerFields drops what the apiserver sets itself and refuses (or ignores) on create.
func clearServerFields(m *metav1.ObjectMeta) {
	m.ResourceVersion = ""
	m.UID = ""
	m.CreationTimestamp = metav1.Time{}
	m.Generation = 0
	m.ManagedFields = nil
}

// String names what was loaded, for logs and failure messages.
func (n demoCounts) String() string {
	return fmt.Sprintf("%d namespaces, %d nodes, %d pods (%d running), %d quotas, %d configmaps, %d events",
		n.Namespaces, n.Nodes, n.Pods, n.Running, n.Quotas, n.ConfigMaps, n.Events)
}

// loadDemoVolcano installs minimal Volcano Queue and PodGroup CRDs and creates the demo's queues (with their
// card quotas) and PodGroups, status included.
func loadDemoVolcano(t testing.TB, env *testenv.Env) (queues, groups int) {
	t.Helper()
	env.InstallVolcanoCRDs(t)
	s, err := snapshot.Parse(examples.DemoCluster, "demo-cluster.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range s.Queues {
		env.CreateWithStatus(t, snapshot.QueueGVR, q)
	}
	for _, g := range s.PodGroups {
		env.CreateWithStatus(t, snapshot.PodGroupGVR, g)
	}
	if len(s.Queues) == 0 {
		t.Fatal("the demo cluster has no Volcano queues")
	}
	return len(s.Queues), len(s.PodGroups)
}
