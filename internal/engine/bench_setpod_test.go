package engine

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// BenchmarkSetPod5000Nodes100kPods is the engine's half of the read path: recording one bound pod (its
// annotations parsed, its devices charged) and removing it again, on the 5,000-node / 100k-pod cluster. The
// informers of serve-extender and top do this for every pod event. It builds its pod from corev1 types and
// the helpers older commits share, so `make bench-compare` can run it against an older base.
func BenchmarkSetPod5000Nodes100kPods(b *testing.B) {
	benchSetPod(b, benchCluster(b, 5000, 20), nil)
}

// BenchmarkSetPodKube5000Nodes100kPods is the same as the commands and the terminal UI build their cluster
// (Config.SchedulerName set): each pod also requests CPU and memory, which kube-scheduler's NodeResourcesFit
// counts per node, so recording a pod also charges its node's kube usage.
func BenchmarkSetPodKube5000Nodes100kPods(b *testing.B) {
	benchSetPod(b, benchKubeCluster(b, 5000, 20), corev1.ResourceList{"cpu": resource.MustParse("1"), "memory": resource.MustParse("4Gi")})
}

func benchSetPod(b *testing.B, c *Cluster, requests corev1.ResourceList) {
	limits := corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1"),
		"nvidia.com/gpumem": resource.MustParse("4096"), "nvidia.com/gpucores": resource.MustParse("10")}
	pods := make([]*corev1.Pod, 64)
	for i := range pods {
		node := fmt.Sprintf("node-%05d", i*71)
		pods[i] = placedOn(mkPod("team-3", fmt.Sprintf("read-%d", i),
			corev1.Container{Name: "c", Resources: corev1.ResourceRequirements{Limits: limits, Requests: requests}}),
			node, fmt.Sprintf("%s-g%d,NVIDIA,4096,10:;", node, i%8))
	}
	i := 0
	benchLoop(b, func() {
		p := pods[i%len(pods)]
		c.SetPod(p)
		c.RemovePod(p.Namespace, p.Name)
		i++
	})
}
