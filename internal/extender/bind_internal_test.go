package extender

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

// TestNodeWritesKeepLittleAndForgetGoneNodes: a lock write keeps only the resourceVersion and the lock of the
// node, and copies of nodes the cluster no longer has are dropped.
func TestNodeWritesKeepLittleAndForgetGoneNodes(t *testing.T) {
	st := NewState(engine.DefaultConfig())
	st.SetNode(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "kept"}})
	s := NewServer(st, fake.NewClientset(), DefaultOptions(), nil, nil)
	for _, name := range []string{"kept", "gone"} {
		s.wrote(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "7", Labels: map[string]string{"big": "x"},
			Annotations: map[string]string{codec.NodeLockAnnotation: "lock", codec.NodeRegisterAnnotation: "big"}}})
		s.nodeTurn(name)
	}
	n := s.lastWritten("kept")
	if n == nil || n.ResourceVersion != "7" || n.Annotations[codec.NodeLockAnnotation] != "lock" || len(n.Annotations) != 1 || n.Labels != nil {
		t.Fatalf("kept copy = %+v", n)
	}
	s.forgetGoneNodes()
	if s.lastWritten("gone") != nil || s.lastWritten("kept") == nil {
		t.Errorf("after forgetting: gone %v, kept %v", s.lastWritten("gone"), s.lastWritten("kept"))
	}
	if _, ok := s.nodeTurns.Load("gone"); ok {
		t.Errorf("the bind turn of a gone node is still kept")
	}
}
