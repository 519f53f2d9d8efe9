package tui

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/examples"
	"github.com/kubectl-hami/kubectl-hami/internal/query"
	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
)

// TestWorldMirror: the handler table follows every kind through apply and a resync, and the Data it builds
// agrees with the shared queries on a cluster built from scratch.
func TestWorldMirror(t *testing.T) {
	s, err := snapshot.Parse(examples.DemoCluster, "demo")
	if err != nil {
		t.Fatal(err)
	}
	w := newWorld(s, snapshot.DefaultDeviceConfigMap, "", false, func() time.Time { return fixedNow })
	d := w.data()
	if want := query.ClusterTotals(w.c); d.Totals.Totals != want {
		t.Fatalf("header totals %+v, want query.ClusterTotals %+v", d.Totals.Totals, want)
	}
	if len(d.Pending) == 0 || len(d.Nodes) < 2 || len(d.Quotas) == 0 {
		t.Fatalf("the demo lacks pending pods, nodes or quotas: %d %d %d", len(d.Pending), len(d.Nodes), len(d.Quotas))
	}
	gone := d.Nodes[0].Name
	waiting := d.Pending[0].Key()
	cases := []struct {
		name  string
		ch    []change
		rs    resync
		check func(d *Data) string
	}{
		{"a pending pod is deleted", []change{{kind: kindPod, key: waiting}}, nil, func(d *Data) string {
			for _, p := range d.Pending {
				if p.Key() == waiting {
					return "still pending"
				}
			}
			return ""
		}},
		{"a resync drops the node the informers do not hold", nil, resync{kindNode: heldBut(w.kinds[kindNode].keys(), gone)}, func(d *Data) string {
			for _, n := range d.Nodes {
				if n.Name == gone {
					return "node still shown"
				}
			}
			if d.Totals.Nodes != len(d.Nodes) {
				return "totals count the dropped node"
			}
			return ""
		}},
		{"an object of the wrong type is ignored", []change{{kind: kindNode, key: "x", obj: 42}, {kind: 99, key: "y"}}, nil, func(d *Data) string {
			if _, ok := w.nodes["x"]; ok {
				return "stored"
			}
			return ""
		}},
		{"the ConfigMap going rebuilds the model", []change{{kind: kindConfigMap, key: snapshot.DefaultDeviceConfigMap}}, nil, func(d *Data) string {
			if want := query.ClusterTotals(w.c); d.Totals.Totals != want {
				return "totals differ after the rebuild"
			}
			return ""
		}},
	}
	for _, c := range cases {
		if msg := c.check(w.apply(c.ch, c.rs)); msg != "" {
			t.Errorf("%s: %s", c.name, msg)
		}
	}
}

func heldBut(keys []string, drop string) map[string]bool {
	out := map[string]bool{}
	for _, k := range keys {
		if k != drop {
			out[k] = true
		}
	}
	return out
}

// TestWorldPodListedTwice: of a pod a snapshot lists twice, the world keeps the last copy, and the Pending
// view follows that copy: waiting when the last one waits, not when the last one is bound.
func TestWorldPodListedTwice(t *testing.T) {
	s, err := snapshot.Parse(examples.DemoCluster, "demo")
	if err != nil {
		t.Fatal(err)
	}
	w := newWorld(s, snapshot.DefaultDeviceConfigMap, "", false, func() time.Time { return fixedNow })
	waiting := w.data().Pending[0]
	bound := waiting.Pod.DeepCopy()
	bound.Spec.NodeName = w.data().Nodes[0].Name
	for _, tc := range []struct {
		name string
		last bool // the waiting copy is listed last
	}{{"bound copy last", false}, {"waiting copy last", true}} {
		s2 := *s
		pods := append(append([]*corev1.Pod(nil), s.Pods.Slice()...), bound)
		if tc.last {
			pods = append(pods, waiting.Pod)
		}
		s2.Pods = snapshot.PodsOf(pods...)
		w := newWorld(&s2, snapshot.DefaultDeviceConfigMap, "", false, func() time.Time { return fixedNow })
		found := false
		for _, p := range w.data().Pending {
			found = found || p.Key() == waiting.Key()
		}
		if found != tc.last {
			t.Errorf("%s: %s pending %v, want %v", tc.name, waiting.Key(), found, tc.last)
		}
	}
}

// TestNodeViewKeepsItsPodObjects: a node's view looks its pod objects up when first asked (not for the first
// frame), yet shows them as they were when it was made: a change applied before that first call does not
// reach an older view, and the new view shows the change.
func TestNodeViewKeepsItsPodObjects(t *testing.T) {
	s, err := snapshot.Parse(examples.DemoCluster, "demo")
	if err != nil {
		t.Fatal(err)
	}
	w := newWorld(s, snapshot.DefaultDeviceConfigMap, "", false, func() time.Time { return fixedNow })
	var old *NodeView
	for _, v := range w.data().Nodes {
		if len(v.Pods) > 0 && w.pods.get(splitKey(v.Pods[0].Key())) != nil {
			old = v
			break
		}
	}
	if old == nil {
		t.Fatal("the demo has no node with a pod object")
	}
	key := old.Pods[0].Key()
	was := w.pods.get(splitKey(key)).CreationTimestamp.Time
	changed := w.pods.get(splitKey(key)).DeepCopy()
	changed.ResourceVersion += "-changed"
	changed.CreationTimestamp.Time = was.Add(-time.Hour)
	d := w.apply([]change{{kind: kindPod, key: key, obj: changed}}, nil)

	if got := old.Running()[0]; got.Key() != key || !got.Created.Equal(was) {
		t.Errorf("the view made before the change shows %s created %v, want %s created %v", got.Key(), got.Created, key, was)
	}
	for _, v := range d.Nodes {
		if v.Name == old.Name {
			if v == old {
				t.Fatal("the node's view was not remade for the change of its pod")
			}
			if got := v.Running()[0]; !got.Created.Equal(changed.CreationTimestamp.Time) {
				t.Errorf("the view made after the change shows %s created %v, want %v", got.Key(), got.Created, changed.CreationTimestamp.Time)
			}
		}
	}
}

// TestNodeViewPodObjectsConcurrent: views' pod objects are looked up on one goroutine while changes are
// applied on another, as the UI and a live rebuild do (run with -race).
func TestNodeViewPodObjectsConcurrent(t *testing.T) {
	s, err := snapshot.Parse(examples.DemoCluster, "demo")
	if err != nil {
		t.Fatal(err)
	}
	w := newWorld(s, snapshot.DefaultDeviceConfigMap, "", false, func() time.Time { return fixedNow })
	datas := make(chan *Data, 1)
	datas <- w.data()
	done := make(chan int)
	go func() {
		pods := 0
		for d := range datas {
			for _, v := range d.Nodes {
				pods += len(v.Running())
			}
		}
		done <- pods
	}()
	keys := w.kinds[kindPod].keys()
	for i := range 50 {
		key := keys[i%len(keys)]
		p := w.pods.get(splitKey(key)).DeepCopy()
		p.ResourceVersion += "+"
		datas <- w.apply([]change{{kind: kindPod, key: key, obj: p}}, nil)
	}
	close(datas)
	if pods := <-done; pods == 0 {
		t.Error("no pod view was made")
	}
}
