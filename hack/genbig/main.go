// Command genbig writes a large synthetic snapshot (JSON List) for end-to-end benchmarks of the read
// commands: NODES nodes with 8 x 80 GiB GPUs, PODS running GPU pods spread over them, a few pending pods
// and namespace quotas. See docs/benchmarks.md. -o yaml writes the same List as `kubectl get -o yaml` does.
//
//	go run ./hack/genbig -nodes 5000 -pods 50000 > /tmp/big.json
//	go run ./hack/genbig -nodes 20000 -pods 300000 -o yaml > /tmp/big.yaml
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
)

func main() {
	nodes := flag.Int("nodes", 5000, "nodes")
	pods := flag.Int("pods", 50000, "running GPU pods")
	format := flag.String("o", "json", "json or yaml")
	flag.Parse()
	if *format != "json" && *format != "yaml" {
		fmt.Fprintln(os.Stderr, "genbig: -o is json or yaml")
		os.Exit(2)
	}
	rng := rand.New(rand.NewPCG(7, 11))
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer w.Flush()
	enc := json.NewEncoder(w)
	if *format == "yaml" {
		fmt.Fprint(w, "apiVersion: v1\nitems:\n")
	} else {
		fmt.Fprint(w, `{"apiVersion":"v1","kind":"List","items":[`)
	}
	first := true
	emit := func(v any) {
		if *format == "yaml" {
			emitYAML(w, v)
			return
		}
		if !first {
			_, _ = w.WriteString(",") // a bufio.Writer keeps its first error; w.Flush reports it
		}
		first = false
		if err := enc.Encode(v); err != nil {
			fmt.Fprintln(os.Stderr, "genbig:", err)
			os.Exit(1)
		}
	}
	type m = map[string]any
	for i := 0; i < *nodes; i++ {
		name := fmt.Sprintf("node-%05d", i)
		devs := make([]codec.DeviceInfo, 8)
		for g := range devs {
			devs[g] = codec.DeviceInfo{ID: fmt.Sprintf("GPU-%s-%d", name, g), Index: g, Count: 10, Devmem: 81920, Devcore: 100,
				Type: "NVIDIA A100-SXM4-80GB", Numa: g / 4, Health: true, Mode: "hami-core"}
		}
		emit(m{"apiVersion": "v1", "kind": "Node", "metadata": m{"name": name, "labels": m{"kubernetes.io/hostname": name},
			"annotations": m{codec.NodeRegisterAnnotation: codec.FormatNodeRegister(devs)}},
			"status": m{"allocatable": m{"cpu": "128", "memory": "1Ti", "pods": "110", "nvidia.com/gpu": "80"},
				"capacity": m{"cpu": "128", "memory": "1Ti", "pods": "110", "nvidia.com/gpu": "80"}}})
	}
	pod := func(ns, name, node string, count, mem, cores int, annos m) m {
		p := m{"apiVersion": "v1", "kind": "Pod", "metadata": m{"namespace": ns, "name": name, "annotations": annos},
			"spec": m{"schedulerName": "hami-scheduler", "containers": []m{{"name": "main", "image": "train:1",
				"resources": m{"limits": m{"nvidia.com/gpu": fmt.Sprint(count), "nvidia.com/gpumem": fmt.Sprint(mem), "nvidia.com/gpucores": fmt.Sprint(cores)},
					"requests": m{"cpu": "1", "memory": "4Gi"}}}}},
			"status": m{"phase": "Pending"}}
		if node != "" {
			p["spec"].(m)["nodeName"] = node
			p["status"] = m{"phase": "Running"}
		}
		return p
	}
	for i := 0; i < *pods; i++ {
		node := fmt.Sprintf("node-%05d", i%*nodes)
		mem := 2048 + rng.IntN(6)*1024
		cores := 5 + rng.IntN(5)*5
		g := rng.IntN(8)
		devs := fmt.Sprintf("GPU-%s-%d,NVIDIA,%d,%d:;", node, g, mem, cores)
		emit(pod(fmt.Sprintf("team-%d", i%20), fmt.Sprintf("job-%06d", i), node, 1, mem, cores, m{
			codec.PodNodeAnnotation: node, codec.PodAllocatedAnnotation: devs, codec.PodToAllocateAnnotation: "", codec.PodBindPhaseAnnotation: "success"}))
	}
	emit(pod("team-1", "pending-big", "", 2, 82000, 10, m{}))
	emit(pod("team-1", "pending-fits", "", 2, 8000, 10, m{}))
	for t := 0; t < 20; t++ {
		emit(m{"apiVersion": "v1", "kind": "ResourceQuota", "metadata": m{"namespace": fmt.Sprintf("team-%d", t), "name": "gpu"},
			"spec": m{"hard": m{"limits.nvidia.com/gpumem": "100000000", "limits.nvidia.com/gpucores": "1000000"}}})
	}
	if *format == "yaml" {
		fmt.Fprint(w, "kind: List\nmetadata:\n  resourceVersion: \"\"\n")
	} else {
		fmt.Fprintln(w, "]}")
	}
}

// emitYAML writes one item of a YAML List: "- " before its first line, two spaces before the others.
func emitYAML(w *bufio.Writer, v any) {
	y, err := yaml.Marshal(v)
	if err != nil {
		fmt.Fprintln(os.Stderr, "genbig:", err)
		os.Exit(1)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(y), "\n"), "\n")
	for i, l := range lines {
		if i == 0 {
			_, _ = w.WriteString("- ")
		} else {
			_, _ = w.WriteString("  ")
		}
		_, _ = w.WriteString(l)
	}
	_, _ = w.WriteString("\n")
}
