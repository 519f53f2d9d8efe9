package extender

import (
	"encoding/json"
	"fmt"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

// handleWebhook is HAMi's mutating admission webhook for pods: a pod that asks for managed resources is sent
// to the HAMi scheduler profile with HAMi's defaults applied; a bad percentage, a privileged GPU container or
// a request over the namespace quota is denied with the numbers.
func (s *Server) handleWebhook(w http.ResponseWriter, r *http.Request) {
	var review admissionv1.AdmissionReview
	if !decode(w, r, &review) {
		return
	}
	if review.Request == nil {
		http.Error(w, "the AdmissionReview has no request", http.StatusBadRequest)
		return
	}
	resp := s.admit(review.Request)
	resp.UID = review.Request.UID
	review.Response = resp
	review.Request = nil
	writeJSON(w, review)
}

func (s *Server) admit(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	allow := &admissionv1.AdmissionResponse{Allowed: true}
	if req.Kind.Kind != "Pod" || req.Operation != admissionv1.Create {
		return allow
	}
	pod := &corev1.Pod{}
	if err := json.Unmarshal(req.Object.Raw, pod); err != nil {
		return deny(fmt.Sprintf("cannot decode the pod: %v", err))
	}
	if pod.Namespace == "" {
		pod.Namespace = req.Namespace
	}
	cfg := s.state.Config()
	if !engine.AsksForManaged(pod, cfg) {
		return allow
	}
	for _, c := range append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...) {
		if c.SecurityContext != nil && c.SecurityContext.Privileged != nil && *c.SecurityContext.Privileged && engine.ContainerAsks(&c, cfg) {
			return deny(fmt.Sprintf("container %s is privileged: a privileged container sees every GPU, so HAMi cannot share them", c.Name))
		}
	}
	// The values a family's MutateAdmission refuses (NVIDIA's memory percentage outside 0-100, AMD's cores
	// outside 1-100 ...), in HAMi's words.
	if r := engine.AdmissionError(pod, cfg); r != nil {
		return deny(r.Message)
	}
	admitted, _ := engine.Mutate(pod, cfg, s.opts.SchedulerName)
	if msg := s.quotaOverrun(admitted); msg != "" {
		return deny(msg)
	}
	// The other families' quota keys, as HAMi's fitResourceQuota checks every family's.
	var refusal *engine.WebhookRefusal
	s.state.Read(func(c *engine.Cluster) { refusal = c.WebhookRefusal(admitted) })
	if refusal != nil {
		return deny(fmt.Sprintf("namespace %s: %s", admitted.Namespace, refusal))
	}
	patch, err := podPatch(pod, admitted)
	if err != nil {
		return deny(err.Error())
	}
	if len(patch) == 0 {
		return allow
	}
	pt := admissionv1.PatchTypeJSONPatch
	allow.PatchType, allow.Patch = &pt, patch
	return allow
}

func deny(msg string) *admissionv1.AdmissionResponse {
	return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{Status: metav1.StatusFailure, Message: msg, Reason: metav1.StatusReasonForbidden, Code: http.StatusForbidden}}
}

// quotaOverrun checks what is known before scheduling of NVIDIA's quota keys: absolute memory and cores times
// the GPU count. Percentages depend on the card and are checked per GPU by the filter. A pod asking no
// memory and no cores is not checked (HAMi's fitResourceQuota, pkg/scheduler/webhook.go:181-183).
func (s *Server) quotaOverrun(pod *corev1.Pod) string {
	req, _ := engine.ParseRequest(pod, s.state.Config())
	var mem, cores, initMem, initCores int64
	for _, c := range req.Containers {
		if c.Kind != 0 {
			continue // another family's keys: WebhookRefusal
		}
		m, k := c.MemoryMiB*int64(c.Count), c.Cores*int64(c.Count)
		if c.Init {
			initMem, initCores = max(initMem, m), max(initCores, k)
		} else {
			mem, cores = mem+m, cores+k
		}
	}
	mem, cores = max(mem, initMem), max(cores, initCores)
	if mem == 0 && cores == 0 {
		return ""
	}
	var q engine.QuotaStatus
	s.state.Read(func(c *engine.Cluster) { q = c.Quota(pod.Namespace) })
	if l := q.Memory; l != nil && l.Used+mem > l.Limit {
		return fmt.Sprintf("namespace %s: %s: the pod needs %d MiB, %d of %d MiB left (ResourceQuota %s)", pod.Namespace, l.Resource, mem, l.Free(), l.Limit, l.Source)
	}
	if l := q.Cores; l != nil && l.Used+cores > l.Limit {
		return fmt.Sprintf("namespace %s: %s: the pod needs %d%%, %d of %d%% left (ResourceQuota %s)", pod.Namespace, l.Resource, cores, l.Free(), l.Limit, l.Source)
	}
	return ""
}

// podPatch is the JSON patch from the submitted pod to the admitted one: the scheduler name and the
// resources of containers whose limits changed.
func podPatch(orig, admitted *corev1.Pod) ([]byte, error) {
	type op struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value,omitempty"`
	}
	var ops []op
	if orig.Spec.SchedulerName != admitted.Spec.SchedulerName {
		ops = append(ops, op{Op: "add", Path: "/spec/schedulerName", Value: admitted.Spec.SchedulerName})
	}
	for _, l := range []struct {
		kind          string
		before, after []corev1.Container
	}{{"initContainers", orig.Spec.InitContainers, admitted.Spec.InitContainers}, {"containers", orig.Spec.Containers, admitted.Spec.Containers}} {
		kind := l.kind
		for i := range l.before {
			before, after := l.before[i].Resources.Limits, l.after[i].Resources.Limits
			if len(before) != len(after) {
				ops = append(ops, op{Op: "add", Path: fmt.Sprintf("/spec/%s/%d/resources/limits", kind, i), Value: after})
			}
		}
	}
	if len(ops) == 0 {
		return nil, nil
	}
	return json.Marshal(ops)
}
