// Package volcano knows Volcano's Queue and PodGroup as the engine needs them: their resources, read through
// the dynamic client so that no Volcano Go module is needed, and their conversion into the engine's types. The
// snapshot reader, the terminal UI's informers and the extender's informers all use it.
package volcano

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

// Group is Volcano's scheduling API group.
const Group = "scheduling.volcano.sh"

// Volcano's Queue and PodGroup resources.
var (
	QueueGVR    = schema.GroupVersionResource{Group: Group, Version: "v1beta1", Resource: "queues"}
	PodGroupGVR = schema.GroupVersionResource{Group: Group, Version: "v1beta1", Resource: "podgroups"}
)

// EngineQueue turns a Queue object into the engine's queue; a bad card quota becomes a problem naming it.
func EngineQueue(u *unstructured.Unstructured) (engine.Queue, []engine.Problem) {
	state, _, _ := unstructured.NestedString(u.Object, "status", "state")
	return engine.NewQueue(u.GetName(), state, u.GetAnnotations())
}

// EnginePodGroup turns a PodGroup object into the engine's PodGroup.
func EnginePodGroup(u *unstructured.Unstructured) (engine.PodGroup, []engine.Problem) {
	queue, _, _ := unstructured.NestedString(u.Object, "spec", "queue")
	phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
	var probs []engine.Problem
	minMember, found, err := unstructured.NestedInt64(u.Object, "spec", "minMember")
	if err != nil {
		probs = append(probs, engine.Problem{Kind: "PodGroup", Object: u.GetNamespace() + "/" + u.GetName(), Field: "spec.minMember", Message: err.Error()})
	}
	if !found {
		minMember = 1
	}
	if queue == "" {
		queue = "default" // Volcano's admission puts a PodGroup without a queue into the default queue
	}
	g, more := engine.NewPodGroup(u.GetNamespace(), u.GetName(), queue, int32(min(max(minMember, 0), 1<<30)), phase, u.GetAnnotations())
	return g, append(probs, more...)
}

// IsVolcano reports whether an object of apiVersion and kind is a Volcano Queue or PodGroup.
func IsVolcano(apiVersion, kind string) bool {
	gv, err := schema.ParseGroupVersion(apiVersion)
	return err == nil && gv.Group == Group && (kind == "Queue" || kind == "PodGroup")
}
