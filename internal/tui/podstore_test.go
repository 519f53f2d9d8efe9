package tui

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
)

// storeFile is a file's pods (records): a/one listed twice (the second copy, on node-b, is the one kept), a/two
// on node-a, b/three unbound.
const storeFile = `{"apiVersion":"v1","kind":"List","items":[
{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"a","name":"one","resourceVersion":"1"},"spec":{"nodeName":"node-a","containers":[{"name":"c"}]}},
{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"a","name":"two","resourceVersion":"2"},"spec":{"nodeName":"node-a","containers":[{"name":"c"}]}},
{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"b","name":"three","resourceVersion":"3"},"spec":{"containers":[{"name":"c"}]}},
{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"a","name":"one","resourceVersion":"4"},"spec":{"nodeName":"node-b","containers":[{"name":"c"}]}}
]}`

func newTestStore(t *testing.T) *podStore {
	t.Helper()
	s, err := snapshot.Parse([]byte(storeFile), "store.json")
	if err != nil {
		t.Fatal(err)
	}
	if s.Pods.Len() != 4 {
		t.Fatalf("the file has %d pods, want 4", s.Pods.Len())
	}
	return newPodStore(s.Pods)
}

func eachKey(s *podStore) []string {
	var out []string
	s.each(func(p *corev1.Pod, _ int) bool {
		out = append(out, p.Namespace+"/"+p.Name+"@"+p.ResourceVersion)
		return true
	})
	slices.Sort(out)
	return out
}

func podNames(pods []*corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Namespace+"/"+p.Name)
	}
	slices.Sort(out)
	return out
}

func TestPodStoreKeepsTheLastCopyAndItsChanges(t *testing.T) {
	s := newTestStore(t)
	if p := s.get(podKey{"a", "one"}); p == nil || p.ResourceVersion != "4" || p.Spec.NodeName != "node-b" {
		t.Fatalf("a/one is %+v, want the second copy (resourceVersion 4, node-b)", p)
	}
	if s.get(podKey{"a", "none"}) != nil || s.has(podKey{"a", "none"}) {
		t.Error("a pod the file does not have is found")
	}
	if got, want := eachKey(s), []string{"a/one@4", "a/two@2", "b/three@3"}; !slices.Equal(got, want) {
		t.Errorf("each yields %v, want %v (a pod listed twice once, its last copy)", got, want)
	}
	if got := podNames(s.byNode().on("node-a")); !slices.Equal(got, []string{"a/two"}) {
		t.Errorf("on node-a: %v, want [a/two] (a/one's kept copy is on node-b)", got)
	}

	// A change and a removal hide the file's copies; a new pod joins.
	moved := s.get(podKey{"a", "two"})
	moved.Spec.NodeName, moved.ResourceVersion = "node-b", "5"
	s.set(podKey{"a", "two"}, moved)
	s.set(podKey{"b", "three"}, nil)
	s.set(podKey{"c", "four"}, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "c", Name: "four", ResourceVersion: "6"}})
	if s.has(podKey{"b", "three"}) || s.get(podKey{"b", "three"}) != nil {
		t.Error("b/three is still there after its removal")
	}
	if got, want := eachKey(s), []string{"a/one@4", "a/two@5", "c/four@6"}; !slices.Equal(got, want) {
		t.Errorf("each yields %v after the changes, want %v", got, want)
	}
	keys := s.keys()
	slices.Sort(keys)
	if want := []string{"a/one", "a/two", "c/four"}; !slices.Equal(keys, want) {
		t.Errorf("keys %v, want %v", keys, want)
	}
	byNode := s.byNode()
	if got := podNames(byNode.on("node-a")); len(got) != 0 {
		t.Errorf("on node-a after a/two moved: %v, want none", got)
	}
	if got := podNames(byNode.on("node-b")); !slices.Equal(got, []string{"a/one", "a/two"}) {
		t.Errorf("on node-b: %v, want [a/one a/two]", got)
	}
	ns := s.namespaces()
	slices.Sort(ns)
	if !slices.Equal(ns, []string{"a", "c"}) {
		t.Errorf("namespaces %v, want [a c]", ns)
	}
	s.settle() // a/one is still the file's
	if got, want := eachKey(s), []string{"a/one@4", "a/two@5", "c/four@6"}; !slices.Equal(got, want) {
		t.Errorf("each yields %v after a settle with a file's pod left, want %v", got, want)
	}
	one := s.get(podKey{"a", "one"})
	s.set(podKey{"a", "one"}, one)
	s.settle() // every file's pod replaced or removed: the records go
	if got, want := eachKey(s), []string{"a/one@4", "a/two@5", "c/four@6"}; !slices.Equal(got, want) || s.base.Len() != 0 || len(s.over) != 3 {
		t.Errorf("after the last settle each yields %v with %d records and %d changes held, want %v, none and 3", got, s.base.Len(), len(s.over), want)
	}
	all := s.all()
	if len(all) != 3 || all[0] == all[1] {
		t.Errorf("all gives %d pods (objects of their own: %v), want 3 distinct", len(all), len(all) > 1 && all[0] != all[1])
	}
}
