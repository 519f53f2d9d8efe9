package snapshot_test

import (
	"bytes"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
)

// TestPlainPodsAreFlatRecords: a pod as HAMi's scheduler leaves it (genbig's: HAMi's annotations, one container
// with limits and requests, a node, a phase) is kept in the record's flat fields alone, which is what makes a
// large snapshot small; a pod with more (labels, owners, conditions) keeps the rest beside them.
func TestPlainPodsAreFlatRecords(t *testing.T) {
	var buf bytes.Buffer
	if err := genbigShape(2, 20).WriteList(&buf, "json"); err != nil {
		t.Fatal(err)
	}
	s, err := snapshot.Parse(buf.Bytes(), "genbig.json")
	if err != nil {
		t.Fatal(err)
	}
	if s.Pods.Len() != 20 {
		t.Fatalf("%d pods read", s.Pods.Len())
	}
	for p := range s.Pods.All() {
		if !snapshot.RecordIsFlat(p) {
			t.Errorf("pod %s/%s keeps a rest: %+v", p.Namespace, p.Name, p)
		}
	}
	rich := s.Pods.At(0).DeepCopy()
	rich.Labels = map[string]string{"app": "train"}
	if snapshot.RecordIsFlat(rich) {
		t.Error("a pod with labels is kept flat: its labels are lost")
	}
	withPort := s.Pods.At(0).DeepCopy()
	withPort.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80}}
	if snapshot.RecordIsFlat(withPort) {
		t.Error("a container with a port is kept flat: its port is lost")
	}
	if got := snapshot.RecordRoundTrip(withPort); got.Spec.Containers[0].Ports[0].ContainerPort != 80 || got.Name != withPort.Name {
		t.Errorf("the pod built from the record is %+v", got)
	}
}

// TestReaderReusesOnlyItsOwnObject: Pods.Reader builds every pod into one object, but the maps and lists of a
// record (its labels, its resource lists) are the record's, so that what a pass keeps of them stays right.
func TestReaderReusesOnlyItsOwnObject(t *testing.T) {
	var buf bytes.Buffer
	w := genbigShape(2, 4)
	for i, p := range w.Pods.Slice() {
		p.Labels = map[string]string{"i": string(rune('a' + i))}
	}
	if err := w.WriteList(&buf, "json"); err != nil {
		t.Fatal(err)
	}
	s, err := snapshot.Parse(buf.Bytes(), "labels.json")
	if err != nil {
		t.Fatal(err)
	}
	read := s.Pods.Reader()
	var labels []map[string]string
	for i := range s.Pods.Len() {
		labels = append(labels, read(i).Labels)
	}
	for i, l := range labels {
		if want := string(rune('a' + i)); l["i"] != want {
			t.Errorf("pod %d: labels %v kept from a reader, want i=%s", i, l, want)
		}
	}
	if read(0) != read(1) {
		t.Error("the reader built two objects: a pass over every pod makes garbage")
	}
}
