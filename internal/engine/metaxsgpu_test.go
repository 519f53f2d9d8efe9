package engine

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
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

// TestMetaxSGPURequest are HAMi v2.10's TestGenerateResourceRequests cases (pkg/device/metax/sdevice_test.go):
// cores 100 when unnamed, the whole memory when vmemory is unnamed, a bare vmemory in GiB, one with a unit in
// bytes.
func TestMetaxSGPURequest(t *testing.T) {
	tests := []struct {
		name string
		c    corev1.Container
		want string // count memMiB/memPercent cores device
	}{
		{"one full sgpu", sctr("1", "", ""), "1 0/100 100 Metax-SGPU"},
		{"two full sgpu", sctr("2", "", ""), "2 0/100 100 Metax-SGPU"},
		{"vcore", sctr("1", "30", ""), "1 0/100 30 Metax-SGPU"},
		{"vmemory bare is GiB", sctr("1", "", "16"), "1 16384/0 100 Metax-SGPU"},
		{"vcore and vmemory", sctr("1", "60", "16"), "1 16384/0 60 Metax-SGPU"},
		{"vmemory in Mi", sctr("1", "60", "1024Mi"), "1 1024/0 60 Metax-SGPU"},
		{"vmemory in Gi", sctr("1", "60", "16Gi"), "1 16384/0 60 Metax-SGPU"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, probs := ParseRequest(mkPod("ns", "p", tc.c), DefaultConfig())
			if len(probs) > 0 || len(req.Containers) != 1 {
				t.Fatalf("containers %+v, problems %v", req.Containers, probs)
			}
			r := req.Containers[0]
			if got := fmt.Sprintf("%d %d/%d %d %s", r.Count, r.MemoryMiB, r.MemoryPercent, r.Cores, r.Device); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	p := mkPod("ns", "p", sctr("1", "", ""))
	p.Annotations[sgpuQos] = "best-effortx"
	if _, probs := ParseRequest(p, DefaultConfig()); len(probs) != 1 || !strings.Contains(probs[0].Message, "best-effort, fixed-share, burst-share") {
		t.Errorf("a QoS policy the webhook refuses: problems %v", probs)
	}
}

// sgpuNode registers one sGPU (HAMi's TestGetMetaxSDevices "normal node": 16 slots, 32768 MiB, 100 %).
func sgpuNode(name string, n int) *corev1.Node {
	var entries []string
	for i := 0; i < n; i++ {
		entries = append(entries, fmt.Sprintf(`{"uuid":"%s-sgpu%d","model":"sgpu","totalDevCount":16,"totalCompute":100,"bdf":"0000:44:00.%d","totalVRam":32768,"numa":1,"healthy":true,"qosPolicy":"fixed-share"}`, name, i, i))
	}
	return mkNode(name, nil, sgpuReg, "["+strings.Join(entries, ",")+"]")
}

// sgpuPod is a counted pod on node using the devices (uuid,mem,cores per device) with a QoS policy ("": none).
func sgpuPod(name, node, qos string, devs ...string) *corev1.Pod {
	p := mkPod("ns", name, sctr(fmt.Sprint(len(devs)), "", ""))
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

// TestMetaxSGPUFit covers the register, the QoS rule (HAMi's TestCheckDeviceQos cases: an unused device takes
// any policy, a whole-GPU request skips the rule, a device shared by another policy fails, by the same
// passes) and what is written at bind.
func TestMetaxSGPUFit(t *testing.T) {
	tests := []struct {
		name  string
		node  *corev1.Node
		pods  []*corev1.Pod
		pod   *corev1.Pod
		fits  bool
		code  Code
		annos map[string]string
	}{
		{name: "unused device takes any policy", node: sgpuNode("s1", 1),
			pod:  withAnno(mkPod("ns", "p", sctr("1", "50", "8")), sgpuQos, "best-effort"),
			fits: true, annos: map[string]string{
				sgpuAlloc:                                "s1-sgpu0,Metax-SGPU,8192,50:;",
				"hami.io/metax-sgpu-devices-to-allocate": "s1-sgpu0,Metax-SGPU,8192,50:;",
				"metax-tech.com/gpu-devices-allocated":   `[[{"uuid":"s1-sgpu0","compute":50,"vRam":8192}]]`,
				"metax-tech.com/predicate-time":          "1700000000000000000",
			}},
		{name: "request exclusive skips the policy", node: sgpuNode("s1", 1),
			pods: []*corev1.Pod{sgpuPod("a", "s1", "burst-share", "s1-sgpu0,0,0")},
			pod:  withAnno(mkPod("ns", "p", sctr("1", "100", "8")), sgpuQos, "best-effort"),
			fits: false, code: ExclusiveDeviceAllocateConflict},
		{name: "device shared by another policy", node: sgpuNode("s1", 1),
			pods: []*corev1.Pod{sgpuPod("a", "s1", "burst-share", "s1-sgpu0,8192,50")},
			pod:  withAnno(mkPod("ns", "p", sctr("1", "50", "8")), sgpuQos, "best-effort"),
			code: CardQosPolicyMismatch},
		{name: "unset policy is the webhook's best-effort", node: sgpuNode("s1", 1),
			pods: []*corev1.Pod{sgpuPod("a", "s1", "fixed-share", "s1-sgpu0,8192,50")},
			pod:  mkPod("ns", "p", sctr("1", "50", "8")),
			code: CardQosPolicyMismatch},
		{name: "device shared by the same policy", node: sgpuNode("s1", 1),
			pods: []*corev1.Pod{sgpuPod("a", "s1", "best-effort", "s1-sgpu0,8192,50")},
			pod:  withAnno(mkPod("ns", "p", sctr("1", "50", "8")), sgpuQos, "best-effort"),
			fits: true, annos: map[string]string{sgpuAlloc: "s1-sgpu0,Metax-SGPU,8192,50:;"}},
		{name: "a whole-GPU user sets no policy", node: sgpuNode("s1", 2),
			pods: []*corev1.Pod{sgpuPod("a", "s1", "burst-share", "s1-sgpu1,32768,100")},
			pod:  withAnno(mkPod("ns", "p", sctr("2", "0", "")), sgpuQos, "best-effort"),
			code: CardInsufficientMemory},
		{name: "another policy's device is passed over", node: sgpuNode("s1", 2),
			pods: []*corev1.Pod{sgpuPod("a", "s1", "burst-share", "s1-sgpu1,8192,50")},
			pod:  withAnno(mkPod("ns", "p", sctr("1", "50", "8")), sgpuQos, "fixed-share"),
			fits: true, annos: map[string]string{sgpuAlloc: "s1-sgpu0,Metax-SGPU,8192,50:;"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCluster(DefaultConfig())
			if probs := c.SetNode(tc.node); len(probs) > 0 {
				t.Fatalf("node problems: %v", probs)
			}
			for _, p := range tc.pods {
				if probs := c.SetPod(p); len(probs) > 0 {
					t.Fatalf("pod problems: %v", probs)
				}
			}
			v := c.Evaluate(tc.pod, EvalOptions{DetailAll: true})
			if v.Fits != tc.fits {
				t.Fatalf("fits = %v, want %v: %s %v", v.Fits, tc.fits, v.Summary, v.Reasons)
			}
			if !tc.fits {
				if len(v.Reasons) != 1 || v.Reasons[0].Code != tc.code {
					t.Fatalf("reasons %v, want %s: %s", v.Reasons, tc.code, v.Summary)
				}
				return
			}
			got := v.Placement.Annotations(testTime)
			for k, want := range tc.annos {
				if got[k] != want {
					t.Errorf("%s = %q, want %q", k, got[k], want)
				}
			}
		})
	}
}

// TestMetaxSGPUQosRemoved: removing the only pod of another policy frees the device for the pod's.
func TestMetaxSGPUQosRemoved(t *testing.T) {
	c := NewCluster(DefaultConfig())
	c.SetNode(sgpuNode("s1", 1))
	c.SetPod(sgpuPod("a", "s1", "burst-share", "s1-sgpu0,8192,50"))
	p := withAnno(mkPod("ns", "p", sctr("1", "50", "8")), sgpuQos, "best-effort")
	if v := c.Evaluate(p, EvalOptions{}); v.Fits {
		t.Fatalf("fits beside a burst-share pod")
	}
	c.RemovePod("ns", "a")
	if v := c.Evaluate(p, EvalOptions{}); !v.Fits {
		t.Fatalf("does not fit once the burst-share pod is gone: %s", v.Summary)
	}
}

// TestMetaxSGPURegister are HAMi's TestGetMetaxSDevices cases: a good list, an empty annotation, an empty list
// (HAMi errors on the last two: the node's sGPUs are not counted, with a problem naming the annotation).
func TestMetaxSGPURegister(t *testing.T) {
	for _, tc := range []struct{ name, value, problem string }{
		{"normal node", "", ""},
		{"empty annotation", "", "not a JSON list"},
		{"no devices", "[]", "no sGPU registered"},
		{"no uuid", `[{"totalDevCount":1}]`, "entry 0: no uuid"},
		{"count out of int32", `[{"uuid":"a","totalDevCount":4294967296}]`, "totalDevCount 4294967296 is out of range"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := sgpuNode("s1", 1)
			if tc.problem != "" {
				n.Annotations[sgpuReg] = tc.value
			}
			c := NewCluster(DefaultConfig())
			probs := c.SetNode(n)
			var msgs []string
			for _, p := range probs {
				msgs = append(msgs, p.Field+": "+p.Message)
			}
			joined := strings.Join(msgs, "; ")
			if tc.problem == "" {
				g := c.Node("s1").GPUs
				if joined != "" || len(g) != 1 || g[0].UUID != "s1-sgpu0" || g[0].Slots != 16 || g[0].TotalMem != 32768 || g[0].TotalCores != 100 || g[0].Numa != 1 || !g[0].Healthy || g[0].Device != "Metax-SGPU" {
					t.Fatalf("devices %+v, problems %q", g, joined)
				}
				return
			}
			if !strings.Contains(joined, tc.problem) || !strings.Contains(joined, sgpuReg) {
				t.Errorf("problems %q, want %q", joined, tc.problem)
			}
		})
	}
}
