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
