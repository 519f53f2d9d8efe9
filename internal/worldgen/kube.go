package worldgen

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
)

// ZoneLabel is the zone label Kube worlds give their nodes (and select on).
const ZoneLabel = "topology.kubernetes.io/zone"

// KubeSchedulers are the schedulers a Kube world's pending pods name: HAMi's profile, kube-scheduler's default
// one by name, and none (the API server defaults it to default-scheduler).
var KubeSchedulers = []string{"hami-scheduler", "hami-scheduler", "default-scheduler", ""}

// kube turns a world into one a real kube-apiserver and kube-scheduler can hold unchanged (Options.Kube), and
// gives it kube-scheduler's own constraints. From a stream of its own, so the GPUs, registrations and running
// pods are the seed's:
//   - no Volcano objects or card annotations (there is no Volcano), no ResourceQuota entry the API server's quota
//     admission would enforce (requests.*: without a quota controller it refuses every pod of the namespace);
//   - nodes: the hostname and zone labels, taints of the three effects, cordons, and allocatable CPU, memory and
//     pod counts small enough that the running pods' requests press on them;
//   - pending pods: HAMi's scheduler or the default one, CPU and memory requests that may not fit, node
//     selectors, required node affinity and tolerations; a few pods ask for no device at all.
func (g *gen) kube(seed uint64) {
	main := g.r
	g.r = rand.New(rand.NewPCG(seed, 0x6b756265))
	defer func() { g.r = main }()

	g.s.Volcano, g.s.Queues, g.s.PodGroups = false, nil, nil
	for _, q := range g.s.Quotas {
		for name := range q.Spec.Hard {
			if strings.HasPrefix(string(name), "requests.") {
				delete(q.Spec.Hard, name)
			}
		}
	}
	zones := []string{"zone-a", "zone-b", "zone-c"}
	taints := []corev1.Taint{
		{Key: "gpu", Value: "reserved", Effect: corev1.TaintEffectNoSchedule},
		{Key: "dedicated", Value: "training", Effect: corev1.TaintEffectNoSchedule},
		{Key: "dedicated", Value: "vision", Effect: corev1.TaintEffectNoExecute},
		{Key: "spot", Value: "true", Effect: corev1.TaintEffectPreferNoSchedule},
		{Key: "maintenance", Effect: corev1.TaintEffectNoExecute},
	}
	var names []string
	for _, n := range g.s.Nodes {
		names = append(names, n.Name)
		n.Labels[corev1.LabelHostname] = n.Name
		n.Labels[ZoneLabel] = g.pick(zones)
		if n.Labels["pool"] == "" {
			n.Labels["pool"] = g.pick([]string{"a", "b"})
		}
		n.Spec.Unschedulable = g.chance(0.12)
		n.Spec.Taints = nil
		for _, t := range taints {
			if g.chance(0.1) {
				n.Spec.Taints = append(n.Spec.Taints, t)
			}
		}
		a := n.Status.Allocatable
		a[corev1.ResourceCPU] = qty(int64(2 + g.r.IntN(15)))
		a[corev1.ResourceMemory] = resource.MustParse(strconv.Itoa(4+g.r.IntN(61)) + "Gi")
		a[corev1.ResourcePods] = qty(int64([]int{3, 5, 8, 110, 110, 110}[g.r.IntN(6)]))
		if n.Status.Capacity == nil {
			n.Status.Capacity = corev1.ResourceList{}
		}
		for k, v := range a {
			n.Status.Capacity[k] = v.DeepCopy()
		}
	}
	var cpuOnly int
	for _, p := range g.s.Pods.Slice() { // whole: a world is built in memory
		for _, k := range []string{codec.CardNameAnnotation, codec.QueueNameAnnotation, codec.GroupNameAnnotation} {
			delete(p.Annotations, k)
		}
		if p.Spec.SchedulerName == "volcano" {
			p.Spec.SchedulerName = "hami-scheduler"
		}
		if p.Spec.NodeName != "" {
			continue
		}
		p.Spec.SchedulerName = g.pick(KubeSchedulers)
		p.Spec.NodeSelector, p.Spec.Tolerations, p.Spec.Affinity = nil, nil, nil
		for i := range p.Spec.Containers {
			l := p.Spec.Containers[i].Resources.Limits
			if g.chance(0.3) {
				l[corev1.ResourceCPU] = qty(int64(1 + g.r.IntN(12)))
			}
			if g.chance(0.3) {
				l[corev1.ResourceMemory] = resource.MustParse(strconv.Itoa(1+g.r.IntN(40)) + "Gi")
			}
		}
		switch g.r.IntN(6) {
		case 0:
			p.Spec.NodeSelector = map[string]string{corev1.LabelHostname: g.pick(names)}
		case 1:
			p.Spec.NodeSelector = map[string]string{ZoneLabel: g.pick(zones)}
		case 2:
			p.Spec.NodeSelector = map[string]string{"pool": g.pick([]string{"a", "b"})}
		}
		if g.chance(0.25) {
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: g.nodeSelector(names, zones)}}
		}
		for _, t := range taints {
			if !g.chance(0.15) {
				continue
			}
			tol := corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOpExists}
			if t.Value != "" && g.chance(0.5) {
				tol.Operator, tol.Value = corev1.TolerationOpEqual, t.Value
				if g.chance(0.2) {
					tol.Value = "other" // tolerates another value: not this taint
				}
			}
			if g.chance(0.5) {
				tol.Effect = t.Effect
			}
			p.Spec.Tolerations = append(p.Spec.Tolerations, tol)
		}
		if g.chance(0.05) {
			p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Operator: corev1.TolerationOpExists}) // tolerates everything
		}
		if g.chance(0.08) {
			cpuOnly++
			p.Spec.InitContainers = nil
			p.Spec.Containers = []corev1.Container{{Name: "main", Image: "busybox", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
				corev1.ResourceCPU: qty(int64(1 + g.r.IntN(8))), corev1.ResourceMemory: resource.MustParse(strconv.Itoa(1+g.r.IntN(16)) + "Gi")}}}}
		}
	}
	g.s.Source += fmt.Sprintf(" (kube constraints, %d pods without a device)", cpuOnly)
}

// nodeSelector is a required node affinity of one or two terms (ORed), each of one or two expressions (ANDed).
func (g *gen) nodeSelector(names, zones []string) *corev1.NodeSelector {
	ns := &corev1.NodeSelector{}
	for t := 0; t < 1+g.r.IntN(2); t++ {
		var term corev1.NodeSelectorTerm
		for e := 0; e < 1+g.r.IntN(2); e++ {
			var r corev1.NodeSelectorRequirement
			switch g.r.IntN(5) {
			case 0:
				r = corev1.NodeSelectorRequirement{Key: ZoneLabel, Operator: corev1.NodeSelectorOpIn, Values: []string{g.pick(zones), g.pick(zones)}}
			case 1:
				r = corev1.NodeSelectorRequirement{Key: ZoneLabel, Operator: corev1.NodeSelectorOpNotIn, Values: []string{g.pick(zones)}}
			case 2:
				r = corev1.NodeSelectorRequirement{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{g.pick(names), g.pick(names)}}
			case 3:
				r = corev1.NodeSelectorRequirement{Key: "nvidia.com/gpu.product", Operator: corev1.NodeSelectorOpExists}
			default:
				r = corev1.NodeSelectorRequirement{Key: "pool", Operator: corev1.NodeSelectorOpDoesNotExist}
			}
			term.MatchExpressions = append(term.MatchExpressions, r)
		}
		ns.NodeSelectorTerms = append(ns.NodeSelectorTerms, term)
	}
	return ns
}
