package snapshot

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-hami/kubectl-hami/examples"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

// wholeFile is the reference the streaming reader must match: the document decoded in one piece.
func wholeFile(t *testing.T, data []byte, isYAML bool) *Snapshot {
	t.Helper()
	js := data
	if isYAML {
		var err error
		if js, err = yaml.YAMLToJSON(data); err != nil {
			t.Fatal(err)
		}
	}
	objs, err := decodeDocument(js)
	if err != nil {
		t.Fatal(err)
	}
	s := &Snapshot{}
	for _, o := range objs {
		s.add(o)
	}
	return s
}

func sameObjects(t *testing.T, got, want *Snapshot) {
	t.Helper()
	got.Source, want.Source, got.file, want.file = "", "", "", ""
	if got.Pods.Len() != want.Pods.Len() || len(got.Nodes) != len(want.Nodes) {
		t.Fatalf("%d pods and %d nodes, want %d and %d", got.Pods.Len(), len(got.Nodes), want.Pods.Len(), len(want.Nodes))
	}
	for i := range want.Pods.Slice() {
		if !reflect.DeepEqual(got.Pods.At(i), want.Pods.At(i)) {
			t.Fatalf("pod %d differs:\n%+v\nwant\n%+v", i, got.Pods.At(i), want.Pods.At(i))
		}
	}
	got.Pods, want.Pods = Pods{}, Pods{} // compared whole: a record keeps its annotations in the map's order
	if !reflect.DeepEqual(got, want) {
		t.Fatal("the snapshots differ")
	}
}

// TestStreamMatchesWholeFile: the demo cluster cut item by item (YAML as kubectl hami snapshot writes it, and
// the same as JSON) reads into exactly the objects the whole document decodes to.
func TestStreamMatchesWholeFile(t *testing.T) {
	sameObjects(t, mustParse(t, examples.DemoCluster), wholeFile(t, examples.DemoCluster, true))
	var js bytes.Buffer
	if err := mustParse(t, examples.DemoCluster).WriteList(&js, "json"); err != nil {
		t.Fatal(err)
	}
	sameObjects(t, mustParse(t, js.Bytes()), wholeFile(t, js.Bytes(), false))
}

func mustParse(t *testing.T, data []byte) *Snapshot {
	t.Helper()
	s, err := Parse(data, "f")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestStreamYAMLShapes: the List layouts YAML writers produce are cut into the same items.
func TestStreamYAMLShapes(t *testing.T) {
	const want = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: p\n    annotations:\n      note: |\n        line one\n\n        line three\n- {apiVersion: v1, kind: Node, metadata: {name: nd}}\n"
	for name, data := range map[string]string{
		"kubectl":           want,
		"indented items":    "apiVersion: v1\nkind: List\nitems:\n  - apiVersion: v1\n    kind: Pod\n    metadata:\n      name: p\n      annotations:\n        note: |\n          line one\n\n          line three\n  - {apiVersion: v1, kind: Node, metadata: {name: nd}}\n",
		"dash alone":        "apiVersion: v1\nitems:\n-\n  apiVersion: v1\n  kind: Pod\n  metadata:\n    name: p\n    annotations:\n      note: |\n        line one\n\n        line three\n-   {apiVersion: v1, kind: Node, metadata: {name: nd}}\nkind: List\n",
		"comments, crlf":    strings.ReplaceAll("# saved\napiVersion: v1\nitems:\n# first\n- apiVersion: v1\n  kind: Pod # a pod\n  metadata:\n    name: p\n    annotations:\n      note: |\n        line one\n\n        line three\n# second\n- {apiVersion: v1, kind: Node, metadata: {name: nd}}\nkind: List\nmetadata: {resourceVersion: \"\"}\n", "\n", "\r\n"),
		"json":              `{"kind":"List","items":[{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","annotations":{"note":"line one\n\nline three\n"}}},{"kind":"Node","metadata":{"name":"nd"}}]}`,
		"json stream":       `{"kind":"PodList","items":[{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","annotations":{"note":"line one\n\nline three\n"}}}]}` + "\n" + `{"kind":"Node","metadata":{"name":"nd"}}`,
		"indented document": "\n  apiVersion: v1\n  kind: List\n  items:\n  - apiVersion: v1\n    kind: Pod\n    metadata:\n      name: p\n      annotations:\n        note: |\n          line one\n\n          line three\n  - {apiVersion: v1, kind: Node, metadata: {name: nd}}\n",
		"json array":        `[{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","annotations":{"note":"line one\n\nline three\n"}}}, {"kind":"Node","metadata":{"name":"nd"}}]`,
	} {
		t.Run(name, func(t *testing.T) {
			s := mustParse(t, []byte(data))
			if s.Pods.Len() != 1 || len(s.Nodes) != 1 || s.Nodes[0].Name != "nd" || s.Pods.At(0).Annotations["note"] != "line one\n\nline three\n" {
				t.Fatalf("pods %d nodes %d, pod %+v", s.Pods.Len(), len(s.Nodes), s.Pods)
			}
		})
	}
}

// TestStreamErrorLines: an error in a List's item names the item and the file's line, in YAML and JSON.
func TestStreamErrorLines(t *testing.T) {
	items := strings.Repeat("- {apiVersion: v1, kind: Node, metadata: {name: a}}\n", 600) // past a batch
	cases := []struct{ data, want string }{
		{"apiVersion: v1\nitems:\n" + items + "- apiVersion: v1\n  kind: Node\n  spec: {unschedulable: maybe}\nkind: List\n", "f:603: items[600]: Node:"},
		{"apiVersion: v1\nitems:\n" + items + "- apiVersion: v1\n  kind: Node\n  metadata: [\nkind: List\n", "f:605:"},
		{"items:\n  - kind: Node\n metadata: {}\n", "f:3: yaml: this line is indented less"},
		{"{\"items\": [\n" + strings.Repeat("{\"kind\":\"Node\"},\n", 600) + "{\"kind\":\n\"Node\", \"spec\": {\"unschedulable\": 3}}]}", "f:603: items[600]: Node:"},
		{"{\"items\": [\n{\"kind\":\"Node\"}\n", "f:3: unexpected end of JSON input"},
		{"{\"kind\":\"Node\"} x", "f:1: invalid character 'x' after top-level value"},
		{"\n\nkind: Node\nspec: {unschedulable: maybe}\n", "f:1: Node:"}, // a document is named by its first line, as before
		{"\n\n  {\"kind\":\"Node\",\n\"spec\": {\"unschedulable\": 3}}", "f:4: Node:"},
	}
	for _, tc := range cases {
		_, err := Parse([]byte(tc.data), "f")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want it to contain %q", err, tc.want)
		}
	}
}

// endless is a reader that never ends: what the cap must stop, having held no more than a buffer of it.
type endless struct {
	line []byte
	read int64
}

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = e.line[(e.read+int64(i))%int64(len(e.line))]
	}
	e.read += int64(len(p))
	return len(p), nil
}

// TestStreamCap: input past the cap is refused when the cap is crossed, in the middle of a List, and the
// reader has read only a buffer past it.
func TestStreamCap(t *testing.T) {
	for _, head := range []string{"apiVersion: v1\nkind: List\nitems:\n", `{"kind":"List","items":[`} {
		item := "- {apiVersion: v1, kind: Node, metadata: {name: a}}\n"
		if head[0] == '{' {
			item = `{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"a"}},` + "\n"
		}
		in := &endless{line: []byte(item)}
		_, err := read(io.MultiReader(strings.NewReader(head), in), "standard input", 1<<20)
		if err == nil || !strings.Contains(err.Error(), "standard input: more than 1 MiB") {
			t.Fatalf("error %v", err)
		}
		if in.read > 2<<20 {
			t.Errorf("read %d bytes to refuse a 1 MiB cap", in.read)
		}
	}
}

type failing struct{}

func (failing) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

func TestStreamReadError(t *testing.T) {
	_, err := read(io.MultiReader(strings.NewReader("apiVersion: v1\nitems:\n- kind: Node\n"), failing{}), "f", -1)
	if err == nil || !strings.Contains(err.Error(), "disk on fire") || !strings.HasPrefix(err.Error(), "snapshot f") {
		t.Fatalf("error %v", err)
	}
}

// TestMissingQueuesAndEvents: a file whose pods name a Volcano queue but holds no Queue, or whose pending pods
// have no Event beside them, says so once among the model's problems; with them, or from a cluster, nothing.
func TestMissingQueuesAndEvents(t *testing.T) {
	const pods = "- {apiVersion: v1, kind: Pod, metadata: {name: a, namespace: ml, annotations: {scheduling.volcano.sh/queue-name: q1}}, spec: {schedulerName: volcano}, status: {phase: Pending}}\n" +
		"- {apiVersion: v1, kind: Pod, metadata: {name: b, namespace: ml, annotations: {scheduling.volcano.sh/queue-name: q1}}, spec: {nodeName: n1}, status: {phase: Running}}\n"
	const queue = "- {apiVersion: scheduling.volcano.sh/v1beta1, kind: Queue, metadata: {name: q1}, spec: {weight: 1}}\n"
	const event = "- {apiVersion: v1, kind: Event, metadata: {name: a.1, namespace: ml}, involvedObject: {kind: Pod, name: a, namespace: ml}, reason: FailedScheduling, message: full}\n"
	fields := func(data string) []string {
		s, err := Parse([]byte("apiVersion: v1\nkind: List\nitems:\n"+data), "f.yaml")
		if err != nil {
			t.Fatal(err)
		}
		_, problems := s.Cluster(engine.DefaultConfig())
		var out []string
		for _, p := range problems {
			if p.Kind == "Snapshot" {
				if p.Object != "f.yaml" {
					t.Errorf("problem names %q, not the file", p.Object)
				}
				out = append(out, p.Field+": "+p.Message)
			}
		}
		return out
	}
	got := fields(pods)
	if len(got) != 2 || !strings.Contains(got[0], "Queue: 2 pod(s) name a Volcano queue") || !strings.Contains(got[0], "kubectl get queues.scheduling.volcano.sh -A -o yaml") ||
		!strings.Contains(got[1], "Event: 1 pending pod(s) (ml/a first)") {
		t.Errorf("without queues and events: %q", got)
	}
	if got := fields(pods + queue + event); len(got) != 0 {
		t.Errorf("with both: %q", got)
	}
	s, _ := Parse([]byte("apiVersion: v1\nkind: List\nitems:\n"+pods), "f.yaml")
	s.file = "" // as read from a cluster
	if _, problems := s.Cluster(engine.DefaultConfig()); slices.ContainsFunc(problems, func(p engine.Problem) bool { return p.Kind == "Snapshot" }) {
		t.Errorf("a cluster's snapshot warns: %v", problems)
	}
}

// FuzzStreamMatchesWholeFile: whatever one JSON document or one YAML document (no anchors: items are read
// apart) decodes to in one piece, the streaming reader reads the same objects from it.
func FuzzStreamMatchesWholeFile(f *testing.F) {
	f.Add([]byte(`{"kind":"List","items":[{"kind":"Pod","metadata":{"name":"p","annotations":{"a":"x\"}y"}}},{"kind":"Node","metadata":{"name":"n"}}]}`))
	f.Add([]byte("apiVersion: v1\nitems:\n- kind: Pod\n  metadata:\n    name: p\n    annotations:\n      a: |\n        x\n\n        y\n-\n  kind: Node\n  metadata: {name: nd}\nkind: List\n"))
	f.Add([]byte("items:\n  - {kind: Node, metadata: {name: a}}\n  # note\n  - kind: Pod\n    metadata: {name: p}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		// Input that begins with { or [ is read as JSON (YAML's flow style is not looked for there).
		trimmed := bytes.TrimSpace(data)
		isYAML := len(trimmed) > 0 && trimmed[0] != '{' && trimmed[0] != '['
		if (!isYAML && !json.Valid(data)) || (isYAML && (bytes.Contains(data, []byte("---")) || bytes.ContainsAny(data, "&*\t"))) {
			return
		}
		js := data
		if isYAML {
			var err error
			if js, err = yaml.YAMLToJSON(data); err != nil {
				return
			}
		}
		objs, err := decodeDocument(js)
		if err != nil || len(objs) == 0 {
			return
		}
		want := &Snapshot{}
		for _, o := range objs {
			want.add(o)
		}
		got, err := Parse(data, "f")
		if err != nil {
			if want.readSomething("f") != nil {
				return
			}
			t.Fatalf("%q: whole, %d objects; streamed: %v", data, len(objs), err)
		}
		sameObjects(t, got, want)
	})
}

// TestLoadFileOverCap: a regular file over the cap is refused by its size, before it is read.
func TestLoadFileOverCap(t *testing.T) {
	path := t.TempDir() + "/big.yaml"
	if err := os.WriteFile(path, bytes.Repeat([]byte("- {kind: Node, metadata: {name: a}}\n"), 40000), 0o600); err != nil {
		t.Fatal(err)
	}
	old := MaxFileBytes
	MaxFileBytes = 1 << 20
	defer func() { MaxFileBytes = old }()
	if _, err := LoadFile(path); err == nil || !strings.Contains(err.Error(), path+": more than 1 MiB") {
		t.Fatalf("error %v", err)
	}
}

// TestLoadReaderSpoolsAPipe: standard input past the cap is refused having been copied to a temporary file,
// before any of it is decoded; input within the cap reads as a file does; binary input is refused first.
func TestLoadReaderSpoolsAPipe(t *testing.T) {
	old := MaxFileBytes
	MaxFileBytes = 1 << 20
	defer func() { MaxFileBytes = old }()
	in := &endless{line: []byte("- {apiVersion: v1, kind: Node, metadata: {name: a}}\n")}
	if _, err := LoadReader(io.MultiReader(strings.NewReader("apiVersion: v1\nitems:\n"), in), "standard input"); err == nil || !strings.Contains(err.Error(), "standard input: more than 1 MiB") {
		t.Fatalf("error %v", err)
	}
	if in.read > 2<<20 {
		t.Errorf("read %d bytes to refuse a 1 MiB cap", in.read)
	}
	s, err := LoadReader(strings.NewReader("apiVersion: v1\nitems:\n- {apiVersion: v1, kind: Node, metadata: {name: a}}\n"), "standard input")
	if err != nil || len(s.Nodes) != 1 {
		t.Fatalf("%v, %+v", err, s)
	}
	if _, err := LoadReader(&endless{line: []byte{0}}, "standard input"); err == nil || !strings.Contains(err.Error(), "binary data") {
		t.Fatalf("NUL input: %v", err)
	}
}
