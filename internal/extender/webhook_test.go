package extender_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kubectl-hami/kubectl-hami/internal/extender"
)

// review sends the pod to /webhook as the apiserver would (CREATE, defaulted schedulerName) and returns the
// response and the pod with the patch applied.
func (e *xtEnv) review(pod *corev1.Pod, op admissionv1.Operation) (*admissionv1.AdmissionResponse, *corev1.Pod) {
	e.t.Helper()
	raw, err := json.Marshal(pod)
	if err != nil {
		e.t.Fatal(err)
	}
	req := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID:       types.UID("review-" + pod.Name),
			Kind:      metav1.GroupVersionKind{Version: "v1", Kind: "Pod"},
			Resource:  metav1.GroupVersionResource{Version: "v1", Resource: "pods"},
			Namespace: pod.Namespace, Name: pod.Name, Operation: op,
			Object: runtime.RawExtension{Raw: raw},
		},
	}
	var out admissionv1.AdmissionReview
	e.postJSON("/webhook", req, &out)
	if out.Response == nil {
		e.t.Fatalf("AdmissionReview without a response")
	}
	if out.Response.UID != req.Request.UID {
		e.t.Errorf("response UID %q, want the request's %q", out.Response.UID, req.Request.UID)
	}
	if out.APIVersion != "admission.k8s.io/v1" || out.Kind != "AdmissionReview" {
		e.t.Errorf("response TypeMeta %+v, want admission.k8s.io/v1 AdmissionReview", out.TypeMeta)
	}
	if len(out.Response.Patch) == 0 {
		return out.Response, pod
	}
	if out.Response.PatchType == nil || *out.Response.PatchType != admissionv1.PatchTypeJSONPatch {
		e.t.Fatalf("patch without PatchType JSONPatch")
	}
	p, err := jsonpatch.DecodePatch(out.Response.Patch)
	if err != nil {
		e.t.Fatalf("bad JSON patch %s: %v", out.Response.Patch, err)
	}
	patched, err := p.Apply(raw)
	if err != nil {
		e.t.Fatalf("JSON patch %s does not apply: %v", out.Response.Patch, err)
	}
	got := &corev1.Pod{}
	if err := json.Unmarshal(patched, got); err != nil {
		e.t.Fatal(err)
	}
	return out.Response, got
}

// xtAsDefaulted is the pod the apiserver hands to a webhook: schedulerName defaulted, no hami scheduler.
func xtAsDefaulted(p *corev1.Pod) *corev1.Pod {
	p = p.DeepCopy()
	p.Spec.SchedulerName = corev1.DefaultSchedulerName
	return p
}

func xtLimit(p *corev1.Pod, c int, name string) (int64, bool) {
	q, ok := p.Spec.Containers[c].Resources.Limits[corev1.ResourceName(name)]
	return q.Value(), ok
}

func TestWebhookSetsSchedulerNameAndDefaults(t *testing.T) {
	e := newXTEnv(t, extender.Options{SchedulerName: xtScheduler})
	t.Run("gpu count only", func(t *testing.T) {
		resp, got := e.review(xtAsDefaulted(xtPod("default", "whole").GPUs(1).Obj()), admissionv1.Create)
		if !resp.Allowed {
			t.Fatalf("denied: %+v", resp.Result)
		}
		if got.Spec.SchedulerName != xtScheduler {
			t.Errorf("schedulerName = %q, want %s", got.Spec.SchedulerName, xtScheduler)
		}
		if n, ok := xtLimit(got, 0, "nvidia.com/gpu"); !ok || n != 1 {
			t.Errorf("nvidia.com/gpu = %d (%v), want 1 kept", n, ok)
		}
		// HAMi v2.8+: whole-card memory with no cores named gets 100 % cores.
		if n, ok := xtLimit(got, 0, "nvidia.com/gpucores"); !ok || n != 100 {
			t.Errorf("nvidia.com/gpucores = %d (%v), want 100 for a whole-card request", n, ok)
		}
	})
	t.Run("memory only gets the default GPU count", func(t *testing.T) {
		resp, got := e.review(xtAsDefaulted(xtPod("default", "memonly").GPUMem(4000).Obj()), admissionv1.Create)
		if !resp.Allowed {
			t.Fatalf("denied: %+v", resp.Result)
		}
		if n, ok := xtLimit(got, 0, "nvidia.com/gpu"); !ok || n != 1 {
			t.Errorf("nvidia.com/gpu = %d (%v), want the default 1", n, ok)
		}
		if n, _ := xtLimit(got, 0, "nvidia.com/gpumem"); n != 4000 {
			t.Errorf("nvidia.com/gpumem = %d, want 4000 kept", n)
		}
		if got.Spec.SchedulerName != xtScheduler {
			t.Errorf("schedulerName = %q", got.Spec.SchedulerName)
		}
	})
	t.Run("cores only in an init container", func(t *testing.T) {
		p := xtAsDefaulted(xtPod("default", "initcores").Obj())
		p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
		p.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "x", Resources: corev1.ResourceRequirements{
			Limits: corev1.ResourceList{"nvidia.com/gpucores": resource.MustParse("20")}}}}
		resp, got := e.review(p, admissionv1.Create)
		if !resp.Allowed {
			t.Fatalf("denied: %+v", resp.Result)
		}
		q := got.Spec.InitContainers[0].Resources.Limits["nvidia.com/gpu"]
		if q.Value() != 1 || got.Spec.SchedulerName != xtScheduler {
			t.Errorf("init container gpu = %s, schedulerName %q; want 1 and %s", q.String(), got.Spec.SchedulerName, xtScheduler)
		}
		if _, ok := xtLimit(got, 0, "nvidia.com/gpu"); ok {
			t.Errorf("the CPU-only app container got a GPU")
		}
	})
	t.Run("empty schedulerName", func(t *testing.T) {
		p := xtPod("default", "empty").GPUs(1).GPUMem(2000).GPUCores(10).Obj()
		p.Spec.SchedulerName = ""
		resp, got := e.review(p, admissionv1.Create)
		if !resp.Allowed || got.Spec.SchedulerName != xtScheduler {
			t.Errorf("allowed %v, schedulerName %q; want %s", resp.Allowed, got.Spec.SchedulerName, xtScheduler)
		}
	})
}

func TestWebhookDenies(t *testing.T) {
	objs := []runtime.Object{
		xtNode("w1", xtGPUs("w1", 2, 16384, 10)),
		xtQuota("team", "gpu-quota", "limits.nvidia.com/gpumem", "10000", "limits.nvidia.com/gpucores", "80"),
		xtPlaced(xtPod("team", "running").GPUs(1).GPUMem(6000).GPUCores(30).Obj(), "w1", xtDev("w1", 0, 6000, 30)),
	}
	e := newXTEnv(t, extender.Options{SchedulerName: xtScheduler}, objs...)
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want []string // substrings of the message
	}{
		{"percentage 150", xtPod("default", "pct").GPUs(1).GPUMemPercent(150).Obj(),
			[]string{"invalid nvidia.com/gpumem-percentage value 150 in container main: must be an integer between 0 and 100"}},
		{"AMD cores 150", func() *corev1.Pod {
			p := xtPod("default", "amd").Obj()
			p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{"amd.com/gpu": resource.MustParse("1"), "amd.com/gpucores": resource.MustParse("150")}
			return p
		}(), []string{"amd.com/gpucores 150 is not an integer percentage between 1 and 100"}},
		{"privileged GPU container", func() *corev1.Pod {
			p := xtPod("default", "priv").GPUs(1).GPUMem(2000).GPUCores(10).Obj()
			p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
			return p
		}(), []string{"main", "privileged"}},
		{"quota memory overrun", xtPod("team", "big").GPUs(1).GPUMem(6000).GPUCores(10).Obj(), []string{"team", "limits.nvidia.com/gpumem", "6000", "4000", "10000", "gpu-quota"}},
		{"quota memory overrun by GPU count", xtPod("team", "two").GPUs(2).GPUMem(3000).GPUCores(10).Obj(), []string{"limits.nvidia.com/gpumem", "6000", "4000 of 10000"}},
		{"quota cores overrun", xtPod("team", "cores").GPUs(1).GPUMem(1000).GPUCores(60).Obj(), []string{"limits.nvidia.com/gpucores", "60", "50", "80", "gpu-quota"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, _ := e.review(xtAsDefaulted(tc.pod), admissionv1.Create)
			if resp.Allowed {
				t.Fatalf("allowed, want denied")
			}
			if resp.Result == nil {
				t.Fatalf("denied without a Result")
			}
			if resp.Result.Code != http.StatusForbidden {
				t.Errorf("code %d, want 403", resp.Result.Code)
			}
			for _, w := range tc.want {
				if !strings.Contains(resp.Result.Message, w) {
					t.Errorf("message %q does not contain %q", resp.Result.Message, w)
				}
			}
		})
	}
	t.Run("within quota", func(t *testing.T) {
		resp, got := e.review(xtAsDefaulted(xtPod("team", "small").GPUs(1).GPUMem(4000).GPUCores(50).Obj()), admissionv1.Create)
		if !resp.Allowed || got.Spec.SchedulerName != xtScheduler {
			t.Errorf("a pod that exactly fills the quota: allowed %v (%+v), schedulerName %q", resp.Allowed, resp.Result, got.Spec.SchedulerName)
		}
	})
	t.Run("percentage 0 is admitted, as HAMi v2.10.0's validateMemoryPercentage admits it", func(t *testing.T) {
		if resp, _ := e.review(xtAsDefaulted(xtPod("default", "pct0").GPUs(1).GPUMemPercent(0).Obj()), admissionv1.Create); !resp.Allowed {
			t.Errorf("denied: %+v", resp.Result)
		}
	})
	t.Run("privileged container without GPU in a GPU pod", func(t *testing.T) {
		p := xtAsDefaulted(xtPod("default", "sidecar").GPUs(1).GPUMem(2000).GPUCores(10).Obj())
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "side", Image: "x",
			SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)}})
		if resp, _ := e.review(p, admissionv1.Create); !resp.Allowed {
			t.Errorf("a privileged sidecar without GPU resources was denied: %+v", resp.Result)
		}
	})
}

func TestWebhookLeavesOtherPodsUntouched(t *testing.T) {
	e := newXTEnv(t, extender.Options{SchedulerName: xtScheduler})
	cpu := xtAsDefaulted(xtPod("default", "cpu").Obj())
	cpu.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("1Gi")}
	cpu.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
	bare := xtAsDefaulted(xtPod("default", "bare").Obj())
	bare.Spec.Containers[0].Resources = corev1.ResourceRequirements{}
	other := xtAsDefaulted(xtPod("default", "fpga").Obj())
	other.Spec.Containers[0].Resources.Limits = corev1.ResourceList{"example.com/fpga": resource.MustParse("1")}
	for _, p := range []*corev1.Pod{cpu, bare, other} {
		resp, got := e.review(p, admissionv1.Create)
		if !resp.Allowed || len(resp.Patch) != 0 || resp.PatchType != nil {
			t.Errorf("pod %s without HAMi resources: allowed %v, patch %s; want allowed, no patch", p.Name, resp.Allowed, resp.Patch)
		}
		if got.Spec.SchedulerName != corev1.DefaultSchedulerName {
			t.Errorf("pod %s: schedulerName changed to %q", p.Name, got.Spec.SchedulerName)
		}
	}
	// An UPDATE of a GPU pod is not this webhook's business either.
	if resp, _ := e.review(xtAsDefaulted(xtPod("default", "upd").GPUs(1).GPUMemPercent(150).Obj()), admissionv1.Update); !resp.Allowed || len(resp.Patch) != 0 {
		t.Errorf("UPDATE: allowed %v, patch %s; want allowed, untouched", resp.Allowed, resp.Patch)
	}
	// A review without a request is a bad request.
	if code, _ := e.post("/webhook", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`); code != http.StatusBadRequest {
		t.Errorf("review without request: %d, want 400", code)
	}
}
