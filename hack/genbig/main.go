// Command genbig writes a large synthetic snapshot (JSON List) for end-to-end benchmarks of the read
// commands: NODES nodes with 8 x 80 GiB GPUs, PODS running GPU pods spread over them, a few pending pods
// and namespace quotas. See docs/benchmarks.md. -o yaml writes the same List as `kubectl get -o yaml` does.
//
//	go run ./hack/genbig -nodes 5000 -pods 50000 > /tmp/big.json
//	go run ./hack/genbig -nodes 20000 -pods 300000 -o yaml > /tmp/big.yaml
//	go run ./hack/genbig -nodes 3000 -pods 45000 -rich > /tmp/rich.json
//
// -rich writes each pod as `kubectl get pods -o json` shows a Deployment's pod (labels, owner, uid, volumes,
// environment, probes, conditions, container statuses): a real cluster's file, where most of a pod is what no
// command reads.
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
	rich := flag.Bool("rich", false, "pods as the API server writes them (volumes, environment, probes, statuses)")
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
		if *rich {
			enrich(p, node)
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

// enrich adds what the API server writes on a Deployment's pod beside what genbig's pods carry.
func enrich(p map[string]any, node string) {
	type m = map[string]any
	meta, spec := p["metadata"].(m), p["spec"].(m)
	name := meta["name"].(string)
	meta["uid"] = fmt.Sprintf("5f0c3e2a-%04x-4b1e-9a7d-%012x", len(name), hash(name))
	meta["resourceVersion"] = fmt.Sprint(100000 + hash(name)%900000)
	meta["creationTimestamp"] = "2026-11-20T08:00:00Z"
	meta["generateName"] = "train-7d9c6b5f4-"
	meta["labels"] = m{"app": "train", "pod-template-hash": "7d9c6b5f4"}
	meta["ownerReferences"] = []m{{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "train-7d9c6b5f4",
		"uid": "0b6c1f9e-2d4a-4c8e-8f1a-3e5d7c9b1a20", "controller": true, "blockOwnerDeletion": true}}
	c := spec["containers"].([]m)[0]
	c["command"] = []string{"python", "-m", "train"}
	c["args"] = []string{"--epochs=90", "--batch-size=256", "--data=/data/imagenet"}
	c["env"] = []m{{"name": "NCCL_DEBUG", "value": "WARN"}, {"name": "OMP_NUM_THREADS", "value": "8"},
		{"name": "POD_NAME", "valueFrom": m{"fieldRef": m{"apiVersion": "v1", "fieldPath": "metadata.name"}}}}
	c["ports"] = []m{{"containerPort": 8080, "name": "metrics", "protocol": "TCP"}}
	c["volumeMounts"] = []m{{"mountPath": "/data", "name": "data", "readOnly": true},
		{"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "name": "kube-api-access-x7k2p", "readOnly": true}}
	probe := m{"httpGet": m{"path": "/healthz", "port": 8080, "scheme": "HTTP"}, "periodSeconds": 10, "timeoutSeconds": 1,
		"successThreshold": 1, "failureThreshold": 3}
	c["livenessProbe"], c["readinessProbe"] = probe, probe
	c["imagePullPolicy"], c["terminationMessagePath"], c["terminationMessagePolicy"] = "IfNotPresent", "/dev/termination-log", "File"
	spec["volumes"] = []m{{"name": "data", "persistentVolumeClaim": m{"claimName": "imagenet"}},
		{"name": "kube-api-access-x7k2p", "projected": m{"defaultMode": 420, "sources": []m{
			{"serviceAccountToken": m{"expirationSeconds": 3607, "path": "token"}},
			{"configMap": m{"name": "kube-root-ca.crt", "items": []m{{"key": "ca.crt", "path": "ca.crt"}}}},
			{"downwardAPI": m{"items": []m{{"path": "namespace", "fieldRef": m{"apiVersion": "v1", "fieldPath": "metadata.namespace"}}}}}}}}}
	spec["dnsPolicy"], spec["enableServiceLinks"], spec["preemptionPolicy"], spec["priority"] = "ClusterFirst", true, "PreemptLowerPriority", 0
	spec["restartPolicy"], spec["securityContext"], spec["serviceAccount"], spec["serviceAccountName"] = "Always", m{}, "default", "default"
	spec["terminationGracePeriodSeconds"] = 30
	spec["tolerations"] = []m{
		{"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists", "tolerationSeconds": 300},
		{"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists", "tolerationSeconds": 300}}
	st := p["status"].(m)
	if node == "" {
		st["conditions"] = []m{{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "lastProbeTime": nil,
			"lastTransitionTime": "2026-11-20T08:00:01Z", "message": "0/3 nodes are available: 3 Insufficient nvidia.com/gpu."}}
		st["qosClass"] = "Burstable"
		return
	}
	ip := fmt.Sprintf("10.%d.%d.%d", hash(node)%200, hash(name)%250, hash(name)/250%250)
	st["conditions"] = []m{}
	for _, t := range []string{"PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"} {
		st["conditions"] = append(st["conditions"].([]m), m{"type": t, "status": "True", "lastProbeTime": nil, "lastTransitionTime": "2026-11-20T08:00:05Z"})
	}
	st["hostIP"], st["hostIPs"] = "192.168.10.7", []m{{"ip": "192.168.10.7"}}
	st["podIP"], st["podIPs"] = ip, []m{{"ip": ip}}
	st["qosClass"], st["startTime"] = "Burstable", "2026-11-20T08:00:02Z"
	st["containerStatuses"] = []m{{"name": "main", "image": "registry.example.com/ml/train:1", "imageID": "registry.example.com/ml/train@sha256:" +
		fmt.Sprintf("%064x", hash(name)), "containerID": "containerd://" + fmt.Sprintf("%064x", hash(name)*31), "ready": true,
		"restartCount": 0, "started": true, "state": m{"running": m{"startedAt": "2026-11-20T08:00:04Z"}}}}
}

// hash is a small deterministic number from a name, for the ids and addresses enrich writes.
func hash(s string) int {
	h := 0
	for _, c := range s {
		h = h*131 + int(c)
	}
	if h < 0 {
		h = -h
	}
	return h % 1000000007
}
