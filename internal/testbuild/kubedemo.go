package testbuild

import (
	"sigs.k8s.io/yaml"

	"github.com/kubectl-hami/kubectl-hami/examples"
)

// KubeGatesDemo is the demo cluster after issue 25's repro: `kubectl cordon gpu-t4-02` (spec.unschedulable
// and the unschedulable taint, as kubectl and the node controller leave it), `kubectl taint node gpu-t4-01
// dedicated=vision:NoSchedule`, and a pending pod default/vision-1 of HAMi's profile asking for 1 GPU of
// 1000 MiB with nodeSelector kubernetes.io/hostname: gpu-t4-01; and team-vision/segmenter-0 on gpu-t4-01 is
// being deleted (Terminating), still holding its GPU. Every GPU's usage stays as in the demo.
func KubeGatesDemo() []byte {
	var list map[string]any
	if err := yaml.Unmarshal(examples.DemoCluster, &list); err != nil {
		panic(err)
	}
	items := list["items"].([]any)
	for _, it := range items {
		o := it.(map[string]any)
		if md := o["metadata"].(map[string]any); o["kind"] == "Pod" && md["name"] == "segmenter-0" {
			md["deletionTimestamp"] = "2026-11-20T09:55:00Z"
			md["deletionGracePeriodSeconds"] = 30
		}
		if o["kind"] != "Node" {
			continue
		}
		md := o["metadata"].(map[string]any)
		spec, _ := o["spec"].(map[string]any)
		if spec == nil {
			spec = map[string]any{}
			o["spec"] = spec
		}
		switch md["name"] {
		case "gpu-t4-02":
			spec["unschedulable"] = true
			spec["taints"] = []any{map[string]any{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule", "timeAdded": "2026-11-20T09:30:00Z"}}
		case "gpu-t4-01":
			spec["taints"] = []any{map[string]any{"key": "dedicated", "value": "vision", "effect": "NoSchedule"}}
		}
	}
	items = append(items, map[string]any{"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "vision-1", "namespace": "default", "uid": "vision-1-uid", "creationTimestamp": "2026-11-20T09:40:00Z"},
		"spec": map[string]any{"schedulerName": "hami-scheduler", "nodeSelector": map[string]any{"kubernetes.io/hostname": "gpu-t4-01"},
			"containers": []any{map[string]any{"name": "main", "image": "vision:1",
				"resources": map[string]any{"limits": map[string]any{"nvidia.com/gpu": "1", "nvidia.com/gpumem": "1000"}}}}},
		"status": map[string]any{"phase": "Pending"}})
	list["items"] = items
	out, err := yaml.Marshal(list)
	if err != nil {
		panic(err)
	}
	return out
}
