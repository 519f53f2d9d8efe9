package snapshot

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-hami/kubectl-hami/examples"
)

// TestWriteListIsTheWholeList: the list written an item at a time (WriteList) is, byte for byte, the list
// marshalled whole and then indented or converted to YAML (wholeList, the writer it replaced), for the demo,
// an empty snapshot and one with every kind the writer knows, long strings folded at spaces at every column,
// characters encoding/json escapes, and lines in annotations.
func TestWriteListIsTheWholeList(t *testing.T) {
	var long []string
	for n := 60; n < 130; n += 7 {
		long = append(long, fmt.Sprintf("      a%d: '%s'", n, strings.Repeat("word ", n/5)+strings.Repeat("x", n%5)))
	}
	every := `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: n1
    annotations:
` + strings.Join(long, "\n") + `
      html: "<a href=\"x\">&amp;</a> \u2028 é"
      lines: "one\ntwo\n\nfour"
- apiVersion: v1
  kind: Pod
  metadata: {name: p, namespace: ns, annotations: {hami.io/vgpu-devices-allocated: "GPU-1,NVIDIA,1000,10:;"}}
  spec: {nodeName: n1, containers: [{name: c, image: "img:1"}]}
- {apiVersion: v1, kind: ResourceQuota, metadata: {name: q, namespace: ns}, spec: {hard: {limits.nvidia.com/gpumem: "1000"}}}
- {apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: kube-system}, data: {config.json: "{\"a\": 1}"}}
- {apiVersion: v1, kind: Event, metadata: {name: e, namespace: ns}, involvedObject: {kind: Pod, name: p, namespace: ns}, reason: FailedScheduling, message: "0/1 nodes are available"}
- {apiVersion: coordination.k8s.io/v1, kind: Lease, metadata: {name: l, namespace: kube-system}, spec: {holderIdentity: h}}
- {apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {name: high}, value: 1000}
- {apiVersion: policy/v1, kind: PodDisruptionBudget, metadata: {name: b, namespace: ns}, spec: {minAvailable: 1}}
- {apiVersion: scheduling.volcano.sh/v1beta1, kind: Queue, metadata: {name: research}, spec: {weight: 1}}
- {apiVersion: scheduling.volcano.sh/v1beta1, kind: PodGroup, metadata: {name: pg, namespace: ns}, spec: {queue: research}}
`
	for _, tc := range []struct {
		name string
		s    *Snapshot
	}{{"demo", mustParse(t, examples.DemoCluster)}, {"empty", &Snapshot{}}, {"every kind", mustParse(t, []byte(every))}} {
		if tc.name == "every kind" && (len(tc.s.Leases) == 0 || len(tc.s.PDBs) == 0 || len(tc.s.Queues) == 0 || len(tc.s.PodGroups) == 0 || tc.s.Pods.Len() == 0) {
			t.Fatalf("the every-kind snapshot lost kinds: %d leases, %d PDBs, %d queues, %d PodGroups, %d pods",
				len(tc.s.Leases), len(tc.s.PDBs), len(tc.s.Queues), len(tc.s.PodGroups), tc.s.Pods.Len())
		}
		for _, format := range []string{"json", "yaml"} {
			var got, want bytes.Buffer
			if err := tc.s.WriteList(&got, format); err != nil {
				t.Fatal(err)
			}
			if err := wholeList(tc.s, &want, format); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				g, w := strings.Split(got.String(), "\n"), strings.Split(want.String(), "\n")
				for i := range min(len(g), len(w)) {
					if g[i] != w[i] {
						t.Fatalf("%s, %s: line %d differs (of %d and %d):\n  written  %q\n  the list %q", tc.name, format, i+1, len(g), len(w), g[i], w[i])
					}
				}
				t.Fatalf("%s, %s: %d lines written, the whole list has %d", tc.name, format, len(g), len(w))
			}
		}
	}
}

// TestWriteListStopsAtTheFirstError: a writer that fails is reported, and the items after the failure are not
// made (a Volcano object after 200 KB of nodes, with a value that counts its marshalling, is never marshalled).
func TestWriteListStopsAtTheFirstError(t *testing.T) {
	for _, format := range []string{"json", "yaml"} {
		s := &Snapshot{}
		for i := range 100 {
			n := mustParse(t, []byte(fmt.Sprintf("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n%d\",\"annotations\":{\"a\":%q}}}", i, strings.Repeat("x", 2000)))).Nodes
			s.Nodes = append(s.Nodes, n...)
		}
		var after countingValue
		s.Queues = append(s.Queues, &unstructured.Unstructured{Object: map[string]any{"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
			"metadata": map[string]any{"name": "q"}, "spec": &after}})
		if err := s.WriteList(failingWriter{}, format); err == nil || !strings.Contains(err.Error(), "disk full") {
			t.Fatalf("%s: err %v, want the writer's", format, err)
		}
		if after > 0 {
			t.Fatalf("%s: the item after the failed write was marshalled %d time(s)", format, after)
		}
		var ok countingValue
		s.Queues[0].Object["spec"] = &ok
		if err := s.WriteList(io.Discard, format); err != nil || ok != 1 {
			t.Fatalf("%s: to a writer that works: err %v, the last item marshalled %d time(s)", format, err, ok)
		}
	}
}

// countingValue counts its marshalling.
type countingValue int

func (c *countingValue) MarshalJSON() ([]byte, error) {
	*c++
	return []byte(`{"weight":1}`), nil
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, fmt.Errorf("disk full") }

// wholeList is the list writer before writelist.go: the whole list marshalled at once, then indented or
// converted. The streaming writer must write its bytes.
func wholeList(s *Snapshot, w io.Writer, format string) error {
	list := struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Items      []any  `json:"items"`
	}{APIVersion: "v1", Kind: "List", Items: []any{}}
	add := func(kind string, obj any) { list.Items = append(list.Items, withKind{kind: kind, obj: obj}) }
	for _, n := range s.Nodes {
		add("Node", n)
	}
	for i := range s.Pods.Len() {
		add("Pod", podAt{&s.Pods, i}) // built when marshalled: never every pod whole at once
	}
	for _, q := range s.Quotas {
		add("ResourceQuota", q)
	}
	for _, cm := range s.ConfigMaps {
		add("ConfigMap", cm)
	}
	for _, e := range s.Events {
		add("Event", e)
	}
	for _, l := range s.Leases {
		list.Items = append(list.Items, withKind{kind: "Lease", apiVersion: "coordination.k8s.io/v1", obj: l})
	}
	for _, pc := range s.PriorityClasses {
		list.Items = append(list.Items, withKind{kind: "PriorityClass", apiVersion: "scheduling.k8s.io/v1", obj: pc})
	}
	for _, b := range s.PDBs {
		list.Items = append(list.Items, withKind{kind: "PodDisruptionBudget", apiVersion: "policy/v1", obj: b})
	}
	for _, u := range append(append([]*unstructured.Unstructured(nil), s.Queues...), s.PodGroups...) {
		list.Items = append(list.Items, u.Object) // keeps its own apiVersion and kind
	}
	js, err := json.Marshal(list)
	if err != nil {
		return err
	}
	if format == "json" {
		var buf bytes.Buffer
		if err := json.Indent(&buf, js, "", "  "); err != nil {
			return err
		}
		buf.WriteByte('\n')
		_, err = w.Write(buf.Bytes())
		return err
	}
	y, err := yaml.JSONToYAML(js)
	if err != nil {
		return err
	}
	_, err = w.Write(y)
	return err
}
