package cli

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-hami/kubectl-hami/examples"
	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
	tb "github.com/kubectl-hami/kubectl-hami/internal/testbuild"
)

// TestDemoFixesAreProven: for every pending pod of the demo, every fix why-pending prints (-o json carries them
// as data) is applied here, independently of the engine's own proof, to a fresh copy of the demo's objects;
// the pod is evaluated on a cluster built from them and must fit exactly when the fix says it is sufficient.
func TestDemoFixesAreProven(t *testing.T) {
	if seen := proveFixes(t, examples.DemoCluster, "--demo"); seen < 5 {
		t.Errorf("only %d fixes on the demo's pending pods; the test would prove nothing", seen)
	}
	// kube-scheduler's own checks: a toleration, an uncordon and the node selector, proven the same way.
	if seen := proveFixes(t, tb.KubeGatesDemo(), "--snapshot", kubeGatesSnapshot(t)); seen < 3 {
		t.Errorf("only %d fixes on the kube-gates demo's pending pods", seen)
	}
}

// proveFixes applies every fix why-pending prints for the pending pods of the cluster (data, read by the
// commands through source) to a fresh copy and checks the verdict after it; it returns the fixes seen.
func proveFixes(t *testing.T, data []byte, source ...string) int {
	base, err := snapshot.Parse(data, "demo")
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, p := range base.Pods.Slice() {
		if p.Spec.NodeName != "" || p.Status.Phase != corev1.PodPending {
			continue
		}
		out, errOut, err := run(t, append([]string{"why-pending", p.Name, "-n", p.Namespace, "-o", "json"}, source...)...)
		if err != nil {
			t.Fatalf("%s/%s: %v\n%s", p.Namespace, p.Name, err, errOut)
		}
		var wp struct {
			Verdict *engine.Verdict `json:"verdict"`
		}
		if err := json.Unmarshal([]byte(out), &wp); err != nil {
			t.Fatal(err)
		}
		if wp.Verdict == nil || wp.Verdict.Fits {
			continue
		}
		text, _, err := run(t, append([]string{"why-pending", p.Name, "-n", p.Namespace}, source...)...)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range wp.Verdict.Fixes {
			seen++
			if !strings.Contains(text, f.Text()) {
				t.Errorf("%s/%s: the fix %q is in -o json but not printed:\n%s", p.Namespace, p.Name, f.Text(), text)
			}
			s, err := snapshot.Parse(data, "demo")
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range f.With {
				applyFix(t, s, p.Namespace+"/"+p.Name, w)
			}
			pod := applyFix(t, s, p.Namespace+"/"+p.Name, f)
			cfg, _ := s.Config(snapshot.DefaultDeviceConfigMap)
			c, _ := s.Cluster(cfg)
			after := c.Evaluate(pod, engine.EvalOptions{Now: fixedNow})
			if after.Fits != f.Sufficient {
				t.Errorf("%s/%s: fix %+v: after applying it the pod fits=%v (%s)", p.Namespace, p.Name, f, after.Fits, after.Summary)
			}
			if !f.Sufficient && engine.Blocker(after) != f.Then {
				t.Errorf("%s/%s: fix %+v: then %q, the engine says %q", p.Namespace, p.Name, f, f.Then, engine.Blocker(after))
			}
		}
	}
	return seen
}

// applyFix changes the snapshot (a ResourceQuota, a queue) or returns a changed copy of the pod.
func applyFix(t *testing.T, s *snapshot.Snapshot, key string, f engine.Fix) *corev1.Pod {
	t.Helper()
	var pod *corev1.Pod
	for _, p := range s.Pods.Slice() {
		if p.Namespace+"/"+p.Name == key {
			pod = p.DeepCopy()
		}
	}
	num := func(v string) int64 {
		n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSuffix(strings.Fields(v)[0], "%"), ","), 10, 64)
		if err != nil {
			t.Fatalf("fix %+v: %q is not a number", f, v)
		}
		return n
	}
	switch kind, name, _ := strings.Cut(f.Object, " "); kind {
	case "Node":
		if f.Field != "spec.unschedulable" || f.To != "false" {
			t.Fatalf("fix %+v: unknown node change", f)
		}
		for _, n := range s.Nodes {
			if n.Name == name {
				n.Spec.Unschedulable = false
				var keep []corev1.Taint
				for _, x := range n.Spec.Taints {
					if x.Key != corev1.TaintNodeUnschedulable {
						keep = append(keep, x)
					}
				}
				n.Spec.Taints = keep
			}
		}
	case "ResourceQuota":
		fields := strings.Split(strings.TrimSuffix(strings.TrimPrefix(f.Field, "spec.hard["), "]"), "], spec.hard[")
		tos := strings.Split(f.To, ", ")
		for _, q := range s.Quotas {
			if q.Namespace != pod.Namespace {
				continue
			}
			for i, field := range fields {
				if cur, ok := q.Spec.Hard[corev1.ResourceName(field)]; ok && cur.Value() < num(tos[i]) {
					q.Spec.Hard[corev1.ResourceName(field)] = *resource.NewQuantity(num(tos[i]), resource.DecimalSI)
				}
			}
		}
	case "Queue":
		card := strings.TrimSuffix(strings.TrimPrefix(f.Field, "metadata.annotations[volcano.sh/card.quota]["), "]")
		for _, q := range s.Queues {
			if q.GetName() != name {
				continue
			}
			a := q.GetAnnotations()
			var quota map[string]int64
			if err := json.Unmarshal([]byte(a[codec.CardQuotaAnnotation]), &quota); err != nil {
				t.Fatal(err)
			}
			quota[card] = num(f.To)
			js, _ := json.Marshal(quota)
			a[codec.CardQuotaAnnotation] = string(js)
			q.SetAnnotations(a)
		}
	case "Pod":
		switch {
		case strings.HasPrefix(f.Field, "metadata.annotations["):
			for _, k := range strings.Split(strings.TrimSuffix(strings.TrimPrefix(f.Field, "metadata.annotations["), "]"), ", ") {
				delete(pod.Annotations, k)
			}
		case strings.HasPrefix(f.Field, "spec.containers[*].resources.limits["):
			// a memory resource, on every container asking for devices of its vendor domain
			res := strings.TrimSuffix(strings.TrimPrefix(f.Field, "spec.containers[*].resources.limits["), "]")
			domain, _, _ := strings.Cut(res, "/")
			for i := range pod.Spec.Containers {
				for name := range pod.Spec.Containers[i].Resources.Limits {
					if strings.HasPrefix(string(name), domain+"/") {
						pod.Spec.Containers[i].Resources.Limits[corev1.ResourceName(res)] = *resource.NewQuantity(num(f.To), resource.DecimalSI)
						break
					}
				}
			}
		case strings.HasPrefix(f.Field, "spec.containers["):
			// one container's device count
			name, res, ok := strings.Cut(strings.TrimPrefix(f.Field, "spec.containers["), "].resources.limits[")
			if !ok {
				t.Fatalf("fix %+v: unknown container field", f)
			}
			res = strings.TrimSuffix(res, "]")
			found := false
			for i := range pod.Spec.Containers {
				if pod.Spec.Containers[i].Name == name {
					pod.Spec.Containers[i].Resources.Limits[corev1.ResourceName(res)] = *resource.NewQuantity(num(f.To), resource.DecimalSI)
					found = true
				}
			}
			if !found {
				t.Fatalf("fix %+v: the pod has no container %s", f, name)
			}
		case f.Field == "spec.tolerations":
			// "+key=value:Effect" or "+key:Effect" (Exists)
			spec := strings.TrimPrefix(f.To, "+")
			kv, effect, _ := strings.Cut(spec, ":")
			key, value, eq := strings.Cut(kv, "=")
			tol := corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffect(effect)}
			if eq {
				tol.Operator, tol.Value = corev1.TolerationOpEqual, value
			}
			pod.Spec.Tolerations = append(pod.Spec.Tolerations, tol)
		case strings.HasPrefix(f.Field, "spec.nodeSelector") || strings.HasPrefix(f.Field, "spec.affinity"):
			pod.Spec.NodeSelector = nil
			if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil {
				a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = nil
			}
		default:
			t.Fatalf("fix %+v: unknown pod field", f)
		}
	default:
		t.Fatalf("fix %+v: unknown object", f)
	}
	return pod
}
