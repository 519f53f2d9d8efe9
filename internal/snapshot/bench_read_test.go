package snapshot_test

import (
	"bytes"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
)

// The read-path benchmarks: a snapshot file's bytes to the engine's model (Parse, then Cluster), as every
// read command does before it evaluates anything. The file has hack/genbig's shape (8 x 80 GiB GPUs per
// node, one-GPU pods bound round robin); this file uses only the package's exported API so that
// `make bench-compare` can build it against an older base too.

// readFiles keeps each generated file for the life of the benchmark process (benchmarks run one at a time).
var readFiles = map[string][]byte{}

// readFile returns the snapshot bytes of nodes/pods in format ("json" or "yaml"), written once per process.
func readFile(b *testing.B, nodes, pods int, format string) []byte {
	b.Helper()
	key := fmt.Sprintf("%d/%d/%s", nodes, pods, format)
	if data, ok := readFiles[key]; ok {
		return data
	}
	var buf bytes.Buffer
	if err := genbigShape(nodes, pods).WriteList(&buf, format); err != nil {
		b.Fatal(err)
	}
	readFiles[key] = buf.Bytes()
	return buf.Bytes()
}

// genbigShape builds the cluster `go run ./hack/genbig -nodes N -pods P` describes, as typed objects.
func genbigShape(nodes, pods int) *snapshot.Snapshot {
	s := &snapshot.Snapshot{}
	alloc := corev1.ResourceList{"cpu": resource.MustParse("128"), "memory": resource.MustParse("1Ti"),
		"pods": resource.MustParse("110"), "nvidia.com/gpu": resource.MustParse("80")}
	for i := range nodes {
		name := fmt.Sprintf("node-%05d", i)
		devices := make([]codec.DeviceInfo, 8)
		for g := range devices {
			devices[g] = codec.DeviceInfo{ID: fmt.Sprintf("GPU-%s-%d", name, g), Index: g, Count: 10, Devmem: 81920,
				Devcore: 100, Type: "NVIDIA A100-SXM4-80GB", Numa: g / 4, Health: true, Mode: "hami-core"}
		}
		s.Nodes = append(s.Nodes, &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name},
				Annotations: map[string]string{codec.NodeRegisterAnnotation: codec.FormatNodeRegister(devices)}},
			Status: corev1.NodeStatus{Allocatable: alloc, Capacity: alloc}})
	}
	for i := range pods {
		node := fmt.Sprintf("node-%05d", i%nodes)
		mem, cores := 2048+(i%6)*1024, 5+(i%5)*5
		limits := corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1"),
			"nvidia.com/gpumem":   *resource.NewQuantity(int64(mem), resource.DecimalSI),
			"nvidia.com/gpucores": *resource.NewQuantity(int64(cores), resource.DecimalSI)}
		s.Pods.Add(&corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: fmt.Sprintf("team-%d", i%20), Name: fmt.Sprintf("job-%06d", i),
				Annotations: map[string]string{codec.PodNodeAnnotation: node, codec.PodToAllocateAnnotation: "",
					codec.PodAllocatedAnnotation: fmt.Sprintf("GPU-%s-%d,NVIDIA,%d,%d:;", node, i%8, mem, cores),
					codec.PodBindPhaseAnnotation: "success"}},
			Spec: corev1.PodSpec{SchedulerName: "hami-scheduler", NodeName: node, Containers: []corev1.Container{{
				Name: "main", Image: "train:1", Resources: corev1.ResourceRequirements{Limits: limits}}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning}})
	}
	return s
}

func benchRead(b *testing.B, nodes, pods int, format string) {
	data := readFile(b, nodes, pods, format)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	done, n := cpuMeter(), 0
	defer func() { done(b, n) }()
	for b.Loop() {
		n++
		s, err := snapshot.Parse(data, "bench")
		if err != nil {
			b.Fatal(err)
		}
		c, _ := s.Cluster(engine.DefaultConfig())
		if got := len(c.NodeNames()); got != nodes {
			b.Fatalf("%d nodes in the model, want %d", got, nodes)
		}
	}
}

// The 500-node JSON and 200-node YAML files are `make bench-compare`'s read path (a fraction of a second each); the 5,000-node one
// is the snapshot of docs/benchmarks.md's read commands.
func BenchmarkReadJSON500Nodes5kPods(b *testing.B)   { benchRead(b, 500, 5000, "json") }
func BenchmarkReadYAML200Nodes2kPods(b *testing.B)   { benchRead(b, 200, 2000, "yaml") }
func BenchmarkReadJSON5000Nodes50kPods(b *testing.B) { benchRead(b, 5000, 50000, "json") }
