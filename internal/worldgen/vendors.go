package worldgen

import (
	"fmt"
	"math/rand/v2"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
)

// vendorNode is one family's node in a world: how its devices are registered and what its pods ask for.
type vendorNode struct {
	name string
	make func(g *gen, n *corev1.Node)
	ask  func(g *gen) corev1.ResourceList
}

var vendorNodes = []vendorNode{
	{"dcu", func(g *gen, n *corev1.Node) {
		n.Annotations["hami.io/node-dcu-register"] = g.registered(n.Name, "dcu", "DCU-Z100", 4, 32768, 100)
	}, func(g *gen) corev1.ResourceList {
		return corev1.ResourceList{"hygon.com/dcunum": qty(int64(1 + g.r.IntN(2))), "hygon.com/dcumem": qty(int64(1000 + g.r.IntN(40000)))}
	}},
	{"npu", func(g *gen, n *corev1.Node) {
		n.Annotations["hami.io/node-register-Ascend910B3"] = g.registered(n.Name, "npu", "Ascend910B3", 4, 65536, 20)
	}, func(g *gen) corev1.ResourceList {
		return corev1.ResourceList{"huawei.com/Ascend910B3": qty(int64(1 + g.r.IntN(2))), "huawei.com/Ascend910B3-memory": qty(int64(1000 + g.r.IntN(70000)))}
	}},
	{"metax", func(g *gen, n *corev1.Node) {
		g.capacity(n, "metax-tech.com/gpu", int64(1+g.r.IntN(8)))
	}, func(g *gen) corev1.ResourceList {
		return corev1.ResourceList{"metax-tech.com/gpu": qty(int64(1 + g.r.IntN(2)))}
	}},
	{"kunlun", func(g *gen, n *corev1.Node) {
		g.capacity(n, "kunlunxin.com/xpu", 8)
	}, func(g *gen) corev1.ResourceList {
		return corev1.ResourceList{"kunlunxin.com/xpu": qty([]int64{1, 2, 3, 4, 8}[g.r.IntN(5)])}
	}},
	{"neuron", func(g *gen, n *corev1.Node) {
		d := int64(1 + g.r.IntN(4))
		g.capacity(n, "aws.amazon.com/neuron", d)
		g.capacity(n, "aws.amazon.com/neuroncore", 2*d)
		n.Labels["node.kubernetes.io/instance-type"] = g.pick([]string{"inf2.xlarge", "trn1.32xlarge"})
	}, func(g *gen) corev1.ResourceList {
		if g.chance(0.5) {
			return corev1.ResourceList{"aws.amazon.com/neuroncore": qty(int64(1 + g.r.IntN(4)))}
		}
		return corev1.ResourceList{"aws.amazon.com/neuron": qty(int64(1 + g.r.IntN(2)))}
	}},
}

// registered is a register annotation of n devices of a type, some unhealthy, now and then malformed.
func (g *gen) registered(node, word, typ string, slots int32, mem, cores int64) string {
	devs := make([]codec.DeviceInfo, 1+g.r.IntN(4))
	for i := range devs {
		devs[i] = codec.DeviceInfo{ID: fmt.Sprintf("%s-%s%d", node, word, i), Index: i, Count: slots, Devmem: mem, Devcore: cores,
			Type: typ, Health: !g.chance(0.05)}
	}
	if g.bad() {
		return "[{"
	}
	return codec.FormatNodeRegister(devs)
}

// capacity gives the node a device plugin's count, in capacity and allocatable.
func (g *gen) capacity(n *corev1.Node, res string, v int64) {
	if n.Status.Capacity == nil {
		n.Status.Capacity = corev1.ResourceList{}
	}
	n.Status.Capacity[corev1.ResourceName(res)] = qty(v)
	n.Status.Allocatable[corev1.ResourceName(res)] = qty(v)
}

// vendors adds, to half of the worlds, one or two nodes of other device families and pending pods asking for
// them. It draws from a stream of its own, so a seed's NVIDIA nodes and pods are what they were before the
// families were added.
func (g *gen) vendors(seed uint64) {
	main := g.r
	g.r = rand.New(rand.NewPCG(seed, 0x76656e646f7273))
	defer func() { g.r = main }()
	if g.chance(0.5) {
		return
	}
	var kinds []vendorNode
	for i := 0; i < 1+g.r.IntN(2); i++ {
		v := vendorNodes[g.r.IntN(len(vendorNodes))]
		kinds = append(kinds, v)
		n := &corev1.Node{ObjectMeta: meta(fmt.Sprintf("node-%s-%d", v.name, i), "")}
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
		n.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: qty(32), corev1.ResourceMemory: qty(256 << 30), corev1.ResourcePods: qty(110)}
		v.make(g, n)
		g.s.Nodes = append(g.s.Nodes, n)
	}
	for i := 0; i < 1+g.r.IntN(3); i++ {
		v := kinds[g.r.IntN(len(kinds))]
		p := &corev1.Pod{ObjectMeta: meta(fmt.Sprintf("vpod-%s-%d", v.name, i), g.pick(g.nss))}
		p.Spec.SchedulerName = g.pick(Schedulers)
		l := v.ask(g)
		l[corev1.ResourceCPU] = qty(1)
		p.Spec.Containers = []corev1.Container{{Name: "main", Image: "pytorch", Resources: corev1.ResourceRequirements{Limits: l}}}
		p.Status.Phase = corev1.PodPending
		g.s.Pods.Add(p)
	}
}
