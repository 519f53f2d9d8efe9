package snapshot_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
)

// TestPlainPodsAreFlatRecords: a pod as HAMi's scheduler leaves it (genbig's: HAMi's annotations, one container
// with limits and requests, a node, a phase) is kept in the record's flat fields alone, which is what makes a
// large snapshot small; what the API server adds to a workload's pod (labels, ports, conditions) goes to its
// meta, and only what is rarer (affinity) to the rest.
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
		if meta, rest := snapshot.RecordParts(p); meta || rest {
			t.Errorf("pod %s/%s keeps a meta (%v) or a rest (%v): %+v", p.Namespace, p.Name, meta, rest, p)
		}
	}
	w := genbigShape(1, 2)
	richPod(w.Pods.At(0), 0)
	buf.Reset()
	if err := w.WriteList(&buf, "json"); err != nil {
		t.Fatal(err)
	}
	if s, err = snapshot.Parse(buf.Bytes(), "rich.json"); err != nil {
		t.Fatal(err)
	}
	rich := s.Pods.At(0) // trimmed as read
	if meta, rest := snapshot.RecordParts(rich); !meta || rest {
		b, _ := json.Marshal(rich)
		t.Logf("%s", b)
		t.Errorf("a pod as the API server writes a Deployment's keeps a meta %v (want one) and a rest %v (want none)", meta, rest)
	}
	if got := snapshot.RecordRoundTrip(rich); !reflect.DeepEqual(got, rich) {
		t.Errorf("the pod built from the record is\n%+v\nwant\n%+v", got, rich)
	}
	rare := rich.DeepCopy()
	rare.Spec.Affinity = &corev1.Affinity{}
	if _, rest := snapshot.RecordParts(rare); !rest {
		t.Error("a pod with an affinity keeps no rest: its affinity is lost")
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

// TestPackedPodsAcrossBatches: a file of many batches of pods (the reader decodes 512 items at a time and packs
// their records into the snapshot's strings before it reuses the decoder's annotation lists for the next batch)
// reads every pod, its unique device list included, as the whole decode does, by At, Reader and Meta.
func TestPackedPodsAcrossBatches(t *testing.T) {
	w := genbigShape(30, 3000)
	for _, format := range []string{"json", "yaml"} {
		var buf bytes.Buffer
		if err := w.WriteList(&buf, format); err != nil {
			t.Fatal(err)
		}
		s, err := snapshot.Parse(buf.Bytes(), "genbig."+format)
		if err != nil {
			t.Fatal(err)
		}
		whole, err := snapshot.ParseWhole(buf.Bytes(), "genbig."+format)
		if err != nil {
			t.Fatal(err)
		}
		if s.Pods.Len() != 3000 || whole.Pods.Len() != 3000 {
			t.Fatalf("%s: %d and %d pods read", format, s.Pods.Len(), whole.Pods.Len())
		}
		read := s.Pods.Reader()
		for i := range s.Pods.Len() {
			want := whole.Pods.At(i)
			if got := s.Pods.At(i); !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: pod %d is\n%+v\nwant\n%+v", format, i, got, want)
			}
			if got := read(i); !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: pod %d by a reader is\n%+v\nwant\n%+v", format, i, got, want)
			}
			if ns, name, node := s.Pods.Meta(i); ns != want.Namespace || name != want.Name || node != want.Spec.NodeName {
				t.Fatalf("%s: pod %d's meta is %s/%s on %s", format, i, ns, name, node)
			}
		}
	}
}

// TestPodsOnIsEveryPodOfTheNode: PodsOn gives the pods bound to a node, in the snapshot's order, none for a node
// without pods or unknown, and never an unbound pod; checked against a scan of every pod, on records (a file)
// and on whole pods.
func TestPodsOnIsEveryPodOfTheNode(t *testing.T) {
	w := genbigShape(7, 60)
	for i, p := range w.Pods.Slice() {
		switch {
		case i%9 == 0:
			p.Spec.NodeName = "" // pending
		case i%11 == 0:
			p.Spec.NodeName = "node-00003" // crowd one node, out of the round's order
		}
	}
	w.Pods.Add(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "elsewhere", Namespace: "x"}, Spec: corev1.PodSpec{NodeName: "gone"}})
	var buf bytes.Buffer
	if err := w.WriteList(&buf, "json"); err != nil {
		t.Fatal(err)
	}
	read, err := snapshot.Parse(buf.Bytes(), "nodes.json")
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]*snapshot.Snapshot{"records": read, "whole": w} {
		for _, node := range []string{"node-00000", "node-00003", "node-00006", "gone", "node-99999", ""} {
			var want []string
			for p := range s.Pods.All() {
				if p.Spec.NodeName == node && node != "" {
					want = append(want, p.Namespace+"/"+p.Name)
				}
			}
			var got []string
			for _, p := range s.PodsOn(node) {
				got = append(got, p.Namespace+"/"+p.Name)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: PodsOn(%q) = %v, want %v", name, node, got, want)
			}
		}
	}
}
