package metaxsgpu_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	ft "github.com/kubectl-hami/kubectl-hami/internal/device/familytest"
	"github.com/kubectl-hami/kubectl-hami/internal/device/metaxsgpu"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

// TestMetaxSGPURequest are HAMi v2.10's TestGenerateResourceRequests cases (pkg/device/metax/sdevice_test.go):
// cores 100 when unnamed, the whole memory when vmemory is unnamed, a bare vmemory in GiB, one with a unit in
// bytes; a QoS policy the webhook refuses is reported.
func TestMetaxSGPURequest(t *testing.T) {
	kinds := ft.Kinds(t, metaxsgpu.Family{})
	for _, tc := range []struct {
		name    string
		c       corev1.Container
		qos     string
		want    string // "count MiB/percent cores device template"
		problem string
	}{
		{"one full sgpu", sctr("1", "", ""), "", "1 0/100 100 Metax-SGPU ", ""},
		{"two full sgpu", sctr("2", "", ""), "", "2 0/100 100 Metax-SGPU ", ""},
		{"vcore", sctr("1", "30", ""), "", "1 0/100 30 Metax-SGPU ", ""},
		{"vmemory bare is GiB", sctr("1", "", "16"), "", "1 16384/0 100 Metax-SGPU ", ""},
		{"vcore and vmemory", sctr("1", "60", "16"), "", "1 16384/0 60 Metax-SGPU ", ""},
		{"vmemory in Mi", sctr("1", "60", "1024Mi"), "", "1 1024/0 60 Metax-SGPU ", ""},
		{"vmemory in Gi", sctr("1", "60", "16Gi"), "", "1 16384/0 60 Metax-SGPU ", ""},
		{"a QoS policy the webhook refuses", sctr("1", "", ""), "best-effortx", "1 0/100 100 Metax-SGPU ", `"best-effortx" is not one of best-effort, fixed-share, burst-share`},
	} {
		p := ft.MkPod("ns", "p", tc.c)
		if tc.qos != "" {
			ft.WithAnno(p, sgpuQos, tc.qos)
		}
		got, problems := ft.Request(t, kinds, p)
		if got != tc.want || (tc.problem == "") != (problems == "") || !strings.Contains(problems, tc.problem) {
			t.Errorf("%s: %q (problems %q), want %q (%q)", tc.name, got, problems, tc.want, tc.problem)
		}
	}
}

// TestMetaxSGPUUsedThenFreed: once the only pod on a device registered with another QoS policy is removed,
// the device is unused and takes the pod's.
func TestMetaxSGPUUsedThenFreed(t *testing.T) {
	w := ft.NewWorld(t, ft.Kinds(t, metaxsgpu.Family{}), []*corev1.Node{sgpuNode("s1", 1)}, sgpuPod("a", "s1", "burst-share", "s1-sgpu0,8192,50"))
	p := ft.WithAnno(ft.MkPod("ns", "p", sctr("1", "50", "8")), sgpuQos, "best-effort")
	if v := w.Evaluate(p); v.Fits {
		t.Fatalf("fits on a used fixed-share device")
	}
	w.C.RemovePod("ns", "a")
	if v := w.Evaluate(p); !v.Fits {
		t.Fatalf("does not fit once the device is unused: %s", v.Summary)
	}
}

// TestMetaxSGPURegister are HAMi's TestGetMetaxSDevices cases as the engine reads a node: a good list (16
// slots, 32768 MiB, 100 %), an empty annotation, an empty list (HAMi errors on the last two: the node's sGPUs
// are not counted, with a problem naming the annotation).
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
			cfg := engine.DefaultConfig()
			cfg.Vendors = ft.Kinds(t, metaxsgpu.Family{})
			c := engine.NewCluster(cfg)
			var msgs []string
			for _, p := range c.SetNode(n) {
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
