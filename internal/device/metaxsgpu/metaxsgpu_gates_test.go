package metaxsgpu_test

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	ft "github.com/kubectl-hami/kubectl-hami/internal/device/familytest"
	"github.com/kubectl-hami/kubectl-hami/internal/device/metaxsgpu"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

const (
	sgpuReg   = "metax-tech.com/node-gpu-devices"
	sgpu      = "metax-tech.com/sgpu"
	sgpuCore  = "metax-tech.com/vcore"
	sgpuMem   = "metax-tech.com/vmemory"
	sgpuAlloc = "hami.io/metax-sgpu-devices-allocated"
	sgpuQos   = "metax-tech.com/sgpu-qos-policy"
)

// sctr is a container asking for MetaX sGPUs with quantities as written in a pod spec ("" leaves one out).
func sctr(count, vcore, vmem string) corev1.Container {
	l := corev1.ResourceList{sgpu: resource.MustParse(count)}
	if vcore != "" {
		l[sgpuCore] = resource.MustParse(vcore)
	}
	if vmem != "" {
		l[sgpuMem] = resource.MustParse(vmem)
	}
	return corev1.Container{Name: "c", Resources: corev1.ResourceRequirements{Limits: l}}
}

func sgpuNode(name string, n int) *corev1.Node {
	qos := make([]string, n)
	for i := range qos {
		qos[i] = "fixed-share"
	}
	return sgpuNodeQos(name, qos...)
}

// sgpuNodeQos is a node of one sGPU per QoS policy its plugin registers ("": none).
func sgpuNodeQos(name string, qos ...string) *corev1.Node {
	var entries []string
	for i, q := range qos {
		entries = append(entries, fmt.Sprintf(`{"uuid":"%s-sgpu%d","model":"sgpu","totalDevCount":16,"totalCompute":100,"bdf":"0000:44:00.%d","totalVRam":32768,"numa":1,"healthy":true,"qosPolicy":%q}`, name, i, i, q))
	}
	node := ft.CapNode(name)
	node.Annotations[sgpuReg] = "[" + strings.Join(entries, ",") + "]"
	return node
}

// sgpuPod is a counted pod on node using the devices (uuid,mem,cores per device) with a QoS policy ("": none).
func sgpuPod(name, node, qos string, devs ...string) *corev1.Pod {
	p := ft.MkPod("ns", name, sctr(fmt.Sprint(len(devs)), "", ""))
	var list []string
	for _, d := range devs {
		f := strings.Split(d, ",")
		list = append(list, f[0]+",Metax-SGPU,"+f[1]+","+f[2])
	}
	p.Annotations[codec.PodNodeAnnotation] = node
	p.Annotations[sgpuAlloc] = strings.Join(list, ":") + ":;"
	if qos != "" {
		p.Annotations[sgpuQos] = qos
	}
	return p
}

// TestMetaxSGPUFit covers the register, the QoS rule as HAMi v2.10.0 decides it (checkDeviceQos,
// pkg/device/metax/sdevice.go:528-556, HAMi's TestCheckDeviceQos: an unused device takes any policy, a
// whole-GPU request skips the rule, a used device takes the policy its plugin registers or none; the counted
// pods' own policies do not count, an earlier container of the pod makes a device its own, AddResourceUsage
// 310-330) and what is written at bind.
func TestMetaxSGPUFit(t *testing.T) {
	ft.Run(t, ft.Kinds(t, metaxsgpu.Family{}), []ft.Case{
		{Name: "unused device takes any policy", Node: sgpuNode("s1", 1),
			Pod:  ft.WithAnno(ft.MkPod("ns", "p", sctr("1", "50", "8")), sgpuQos, "best-effort"),
			Want: [][]string{{"s1-sgpu0"}}, Annotations: map[string]string{
				sgpuAlloc:                                "s1-sgpu0,Metax-SGPU,8192,50:;",
				"hami.io/metax-sgpu-devices-to-allocate": "s1-sgpu0,Metax-SGPU,8192,50:;",
				"metax-tech.com/gpu-devices-allocated":   `[[{"uuid":"s1-sgpu0","compute":50,"vRam":8192}]]`,
				"metax-tech.com/predicate-time":          "1700000000000000000",
			}},
		{Name: "request exclusive skips the policy", Node: sgpuNode("s1", 1),
			Counted: []*corev1.Pod{sgpuPod("a", "s1", "burst-share", "s1-sgpu0,0,0")},
			Pod:     ft.WithAnno(ft.MkPod("ns", "p", sctr("1", "100", "8")), sgpuQos, "best-effort"),
			Code:    engine.ExclusiveDeviceAllocateConflict},
		{Name: "a used device registered with another policy, whatever its pods", Node: sgpuNodeQos("s1", "burst-share"),
			Counted: []*corev1.Pod{sgpuPod("a", "s1", "best-effort", "s1-sgpu0,8192,50")},
			Pod:     ft.WithAnno(ft.MkPod("ns", "p", sctr("1", "50", "8")), sgpuQos, "best-effort"),
			Code:    engine.CardQosPolicyMismatch},
		{Name: "unset policy is the webhook's best-effort", Node: sgpuNode("s1", 1),
			Counted: []*corev1.Pod{sgpuPod("a", "s1", "fixed-share", "s1-sgpu0,8192,50")},
			Pod:     ft.MkPod("ns", "p", sctr("1", "50", "8")),
			Code:    engine.CardQosPolicyMismatch},
		{Name: "a used device registered with the pod's policy, whatever its pods", Node: sgpuNodeQos("s1", "best-effort"),
			Counted: []*corev1.Pod{sgpuPod("a", "s1", "burst-share", "s1-sgpu0,8192,50")},
			Pod:     ft.WithAnno(ft.MkPod("ns", "p", sctr("1", "50", "8")), sgpuQos, "best-effort"),
			Want:    [][]string{{"s1-sgpu0"}}, Annotations: map[string]string{sgpuAlloc: "s1-sgpu0,Metax-SGPU,8192,50:;"}},
		{Name: "a used device registered with no policy takes any", Node: sgpuNodeQos("s1", ""),
			Counted: []*corev1.Pod{sgpuPod("a", "s1", "burst-share", "s1-sgpu0,8192,50")},
			Pod:     ft.WithAnno(ft.MkPod("ns", "p", sctr("1", "50", "8")), sgpuQos, "fixed-share"),
			Want:    [][]string{{"s1-sgpu0"}}, Annotations: map[string]string{sgpuAlloc: "s1-sgpu0,Metax-SGPU,8192,50:;"}},
		{Name: "a device an earlier container of the pod took is the pod's", Node: sgpuNodeQos("s1", "burst-share"),
			Pod:  ft.WithAnno(ft.MkPod("ns", "p", sctr("1", "30", "8"), sctr("1", "30", "8")), sgpuQos, "best-effort"),
			Want: [][]string{{"s1-sgpu0"}, {"s1-sgpu0"}}, Annotations: map[string]string{sgpuAlloc: "s1-sgpu0,Metax-SGPU,8192,30:;s1-sgpu0,Metax-SGPU,8192,30:;"}},
		// sdevice.go:347-351: the sGPU Fit names an unhealthy device CardUnhealthy, not CardNotHealth.
		{Name: "an unhealthy device is CardUnhealthy", Node: func() *corev1.Node {
			n := sgpuNode("s1", 1)
			n.Annotations[sgpuReg] = strings.Replace(n.Annotations[sgpuReg], `"healthy":true`, `"healthy":false`, 1)
			return n
		}(),
			Pod:  ft.MkPod("ns", "p", sctr("1", "50", "8")),
			Code: engine.CardUnhealthy, Explains: "registered unhealthy"},
		{Name: "another policy's device is passed over", Node: sgpuNodeQos("s1", "fixed-share", "burst-share"),
			Counted: []*corev1.Pod{sgpuPod("a", "s1", "fixed-share", "s1-sgpu0,8192,50", "s1-sgpu1,8192,50")},
			Pod:     ft.WithAnno(ft.MkPod("ns", "p", sctr("1", "50", "8")), sgpuQos, "fixed-share"),
			Want:    [][]string{{"s1-sgpu0"}}, Annotations: map[string]string{sgpuAlloc: "s1-sgpu0,Metax-SGPU,8192,50:;"}},
	})
}
