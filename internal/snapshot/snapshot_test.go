package snapshot

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hami/kubectl-hami/examples"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

func TestParseFormats(t *testing.T) {
	cases := []struct {
		name                 string
		data                 string
		nodes, pods, skipped int
	}{
		{"yaml list", "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Node, metadata: {name: a}}\n- {apiVersion: v1, kind: Pod, metadata: {name: p}}\n", 1, 1, 0},
		{"kubectl get -o yaml NodeList", "apiVersion: v1\nkind: NodeList\nitems:\n- metadata: {name: a}\n  kind: Node\n", 1, 0, 0},
		{"multi-document yaml with comments", "# saved\n---\napiVersion: v1\nkind: Node\nmetadata: {name: a}\n---\n---\nkind: Service\nmetadata: {name: s}\n", 1, 0, 1},
		{"json list", `{"kind":"List","items":[{"kind":"Pod","metadata":{"name":"p"}},{"kind":"Pod","metadata":{"name":"q"}}]}`, 0, 2, 0},
		{"json single object", `{"kind":"Node","metadata":{"name":"a"}}`, 1, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse([]byte(tc.data), "f")
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Nodes) != tc.nodes || s.Pods.Len() != tc.pods || s.Skipped != tc.skipped {
				t.Fatalf("nodes %d pods %d skipped %d; want %d %d %d", len(s.Nodes), s.Pods.Len(), s.Skipped, tc.nodes, tc.pods, tc.skipped)
			}
		})
	}
}

func TestParseErrorsNameFileAndLine(t *testing.T) {
	cases := []struct{ data, want string }{
		{"kind: Node\nmetadata:\n  name: a\n---\nkind: Node\nmetadata: [\n", "f:6:"},
		{"{\"kind\":\"List\",\n\"items\": [\n{\"kind\": 3}]}", "f:3: items[0]:"},
		{"{\"kind\":\"List\",\n\"items\": [\n{\"kind\" 3}]}", "f:3:"},
		{"", "f: the snapshot is empty"},
		{"kind: Node\nmetadata: {name: 7}\nspec: {unschedulable: maybe}\n", "f:1: Node:"},
		{"metadata: {name: a}\n", "f:1: object without kind"},
	}
	for _, tc := range cases {
		_, err := Parse([]byte(tc.data), "f")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) error %v, want it to contain %q", tc.data, err, tc.want)
		}
	}
}

func TestDeviceConfigFromConfigMap(t *testing.T) {
	s, err := Parse([]byte(`apiVersion: v1
kind: ConfigMap
metadata: {name: hami-scheduler-device, namespace: kube-system}
data:
  device-config.yaml: |
    nvidia:
      resourceCountName: example.com/vgpu
      resourceMemoryName: example.com/vmem
      defaultMemory: 2048
      memoryFactor: 2
`), "cm")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := s.Config(DefaultDeviceConfigMap)
	if err != nil {
		t.Fatal(err)
	}
	want := engine.DefaultConfig()
	want.SchedulerName = engine.DefaultSchedulerName // a snapshot's pods are judged by their scheduler
	want.ResourceCountName, want.ResourceMemoryName, want.DefaultMemory, want.MemoryFactor = "example.com/vgpu", "example.com/vmem", 2048, 2
	if !reflect.DeepEqual(cfg, want) {
		t.Fatalf("config %+v\nwant %+v", cfg, want)
	}
	def := engine.DefaultConfig()
	def.SchedulerName = engine.DefaultSchedulerName
	if cfg, _ := s.Config("other/name"); !reflect.DeepEqual(cfg, def) {
		t.Fatalf("a missing ConfigMap must give the defaults, got %+v", cfg)
	}
}

// FuzzParse: no snapshot input panics, and every error names the file.
func FuzzParse(f *testing.F) {
	f.Add(examples.DemoCluster)
	f.Add([]byte("kind: Node\nmetadata: {name: a}\n---\nkind: Pod\n"))
	f.Add([]byte(`{"kind":"List","items":[{"kind":"Pod","metadata":{"name":"p","annotations":{"hami.io/vgpu-node":"n"}}}]}`))
	f.Add([]byte("---\n---\n"))
	f.Add([]byte("items: [1, 2]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data, "fuzz.yaml")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.yaml") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		s.Cluster(engine.DefaultConfig()) // building the engine model from any parsed input must not panic
	})
}

// TestDeviceConfigRefusesAbsurdValues: 0, negative and empty values are not taken; the error names each key, and
// HAMi's default stays for it while the sound keys apply.
func TestDeviceConfigRefusesAbsurdValues(t *testing.T) {
	cm := func(body string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "hami-scheduler-device"},
			Data: map[string]string{DeviceConfigKey: "nvidia:\n" + body}}
	}
	def := engine.DefaultConfig()
	for _, tc := range []struct {
		body string
		keys []string
	}{
		{"  memoryFactor: 0\n  defaultMemory: 2048\n", []string{"nvidia.memoryFactor is 0"}},
		{"  memoryFactor: -2\n", []string{"nvidia.memoryFactor is -2"}},
		{"  defaultGPUNum: 0\n  defaultCores: 101\n", []string{"nvidia.defaultGPUNum is 0", "nvidia.defaultCores is 101"}},
		{"  defaultMemory: -1\n", []string{"nvidia.defaultMemory is -1"}},
		{"  resourceCountName: \"\"\n  resourceMemoryName:\n", []string{"nvidia.resourceCountName is empty", "nvidia.resourceMemoryName is empty"}},
		{"  memoryFactor:\n", []string{"nvidia.memoryFactor is empty"}},
	} {
		cfg, err := DeviceConfig(cm(tc.body), def)
		if err == nil {
			t.Errorf("%q: taken without an error: %+v", tc.body, cfg)
			continue
		}
		for _, k := range tc.keys {
			if !strings.Contains(err.Error(), k) {
				t.Errorf("%q: error %q does not say %q", tc.body, err, k)
			}
		}
		if cfg.MemoryFactor != def.MemoryFactor || cfg.DefaultGPUNum != def.DefaultGPUNum || cfg.ResourceCountName != def.ResourceCountName ||
			cfg.ResourceMemoryName != def.ResourceMemoryName || cfg.DefaultCores != def.DefaultCores {
			t.Errorf("%q: an absurd value was taken: %+v", tc.body, cfg)
		}
		if strings.Contains(tc.body, "defaultMemory: 2048") && cfg.DefaultMemory != 2048 {
			t.Errorf("%q: the sound key next to it was not taken: defaultMemory %d", tc.body, cfg.DefaultMemory)
		}
	}
	if _, err := DeviceConfig(cm("  defaultMemory: 0\n  defaultCores: 0\n  memoryFactor: 1\n"), def); err != nil {
		t.Errorf("0 memory (the whole GPU) and 0 cores are HAMi's own defaults: %v", err)
	}
}

// TestLeasesRoundTrip: a scheduler's leader Lease in a file is read, says the source could read Leases, and is
// written back with its own apiVersion.
func TestLeasesRoundTrip(t *testing.T) {
	in := []byte(`apiVersion: v1
kind: List
items:
- apiVersion: coordination.k8s.io/v1
  kind: Lease
  metadata: {name: hami-scheduler, namespace: kube-system}
  spec: {holderIdentity: hami-scheduler-0_abc, leaseDurationSeconds: 15}
`)
	s, err := Parse(in, "leases")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Leases) != 1 || !s.LeasesRead || *s.Leases[0].Spec.HolderIdentity != "hami-scheduler-0_abc" {
		t.Fatalf("leases %+v, read %v", s.Leases, s.LeasesRead)
	}
	var buf bytes.Buffer
	if err := s.WriteList(&buf, "yaml"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "apiVersion: coordination.k8s.io/v1") {
		t.Errorf("written without the Lease's apiVersion:\n%s", buf.String())
	}
	again, err := Parse(buf.Bytes(), "again")
	if err != nil || len(again.Leases) != 1 {
		t.Fatalf("round trip: %v, %d leases", err, len(again.Leases))
	}
}

// PriorityClasses and PodDisruptionBudgets are read from a file and written back by WriteList.
func TestPreemptionObjectsRoundTrip(t *testing.T) {
	data := `apiVersion: v1
kind: List
items:
- {apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {name: prod}, value: 1000, preemptionPolicy: PreemptLowerPriority}
- apiVersion: policy/v1
  kind: PodDisruptionBudget
  metadata: {name: infer, namespace: ml}
  spec: {minAvailable: 1, selector: {matchLabels: {app: infer}}}
  status: {disruptionsAllowed: 0}
- {apiVersion: v1, kind: Pod, metadata: {name: p, namespace: ml}, spec: {priorityClassName: prod, priority: 1000}}
`
	s, err := Parse([]byte(data), "f")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.PriorityClasses) != 1 || s.PriorityClasses[0].Value != 1000 || len(s.PDBs) != 1 || s.PDBs[0].Spec.MinAvailable.IntValue() != 1 || s.Skipped != 0 {
		t.Fatalf("read %d PriorityClasses, %d PDBs, skipped %d", len(s.PriorityClasses), len(s.PDBs), s.Skipped)
	}
	var buf bytes.Buffer
	if err := s.WriteList(&buf, "yaml"); err != nil {
		t.Fatal(err)
	}
	back, err := Parse(buf.Bytes(), "written")
	if err != nil {
		t.Fatal(err)
	}
	if len(back.PriorityClasses) != 1 || back.PriorityClasses[0].Name != "prod" || len(back.PDBs) != 1 || back.PDBs[0].Namespace != "ml" {
		t.Fatalf("written back: %d PriorityClasses, %d PDBs:\n%s", len(back.PriorityClasses), len(back.PDBs), buf.String())
	}
	for _, want := range []string{"apiVersion: scheduling.k8s.io/v1", "apiVersion: policy/v1"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("written list lacks %q", want)
		}
	}
}
