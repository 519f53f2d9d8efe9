package snapshot

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// WriteList writes the snapshot as one v1 List in YAML or JSON, an item at a time: the text of a large
// snapshot (300k pods: 200 MB of JSON, and many times that while converted to YAML whole) is never held at
// once. The bytes are those of the list marshalled whole and then indented (JSON) or converted (YAML):
// encoding/json marshals an item alone as it does inside the list, json.Indent with the list's prefix
// indents it as the list's indentation does, and a YAML item converted as a one-item sequence sits at the
// columns it has in the whole list (a sequence under a mapping key is not indented), so long strings fold at
// the same places. TestWriteListIsTheWholeList holds the two together.
func (s *Snapshot) WriteList(w io.Writer, format string) error {
	lw := listWriter{w: bufio.NewWriterSize(w, 64<<10), yaml: format != "json"}
	lw.begin()
	for _, n := range s.Nodes {
		lw.item(withKind{kind: "Node", obj: n})
	}
	for i := range s.Pods.Len() {
		lw.item(withKind{kind: "Pod", obj: podAt{&s.Pods, i}}) // built when marshalled: one pod whole at a time
	}
	for _, q := range s.Quotas {
		lw.item(withKind{kind: "ResourceQuota", obj: q})
	}
	for _, cm := range s.ConfigMaps {
		lw.item(withKind{kind: "ConfigMap", obj: cm})
	}
	for _, e := range s.Events {
		lw.item(withKind{kind: "Event", obj: e})
	}
	for _, l := range s.Leases {
		lw.item(withKind{kind: "Lease", apiVersion: "coordination.k8s.io/v1", obj: l})
	}
	for _, pc := range s.PriorityClasses {
		lw.item(withKind{kind: "PriorityClass", apiVersion: "scheduling.k8s.io/v1", obj: pc})
	}
	for _, b := range s.PDBs {
		lw.item(withKind{kind: "PodDisruptionBudget", apiVersion: "policy/v1", obj: b})
	}
	for _, u := range append(append([]*unstructured.Unstructured(nil), s.Queues...), s.PodGroups...) {
		lw.item(u.Object) // keeps its own apiVersion and kind
	}
	return lw.end()
}

// listWriter writes a v1 List's items one by one; the first error stops it and is returned by end.
type listWriter struct {
	w     *bufio.Writer
	yaml  bool
	items int
	buf   bytes.Buffer // one item's indented JSON
	err   error
}

// begin writes what comes before the items: in YAML the list's keys are sorted, so the items follow
// apiVersion and precede kind.
func (l *listWriter) begin() {
	if l.yaml {
		l.w.WriteString("apiVersion: v1\nitems:")
		return
	}
	l.w.WriteString("{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"List\",\n  \"items\": [")
}

func (l *listWriter) item(obj any) {
	if l.err != nil {
		return
	}
	js, err := json.Marshal(obj)
	if err != nil {
		l.err = err
		return
	}
	if l.items == 0 && l.yaml {
		l.write([]byte{'\n'})
	}
	l.items++
	if l.yaml {
		y, err := yaml.JSONToYAML(append(append([]byte{'['}, js...), ']'))
		if err != nil {
			l.err = err
			return
		}
		l.write(y)
		return
	}
	if l.items > 1 {
		l.write([]byte{','})
	}
	l.write([]byte("\n    "))
	l.buf.Reset()
	if err := json.Indent(&l.buf, js, "    ", "  "); err != nil {
		l.err = err
		return
	}
	l.write(l.buf.Bytes())
}

// write keeps the first error of the output (bufio's, once a flush failed): the items after it are not made.
func (l *listWriter) write(b []byte) {
	if _, err := l.w.Write(b); err != nil && l.err == nil {
		l.err = err
	}
}

func (l *listWriter) end() error {
	switch {
	case l.err != nil:
		return l.err
	case l.yaml && l.items == 0:
		l.w.WriteString(" []\nkind: List\n")
	case l.yaml:
		l.w.WriteString("kind: List\n")
	case l.items == 0:
		l.w.WriteString("]\n}\n")
	default:
		l.w.WriteString("\n  ]\n}\n")
	}
	return l.w.Flush()
}
