package extender_test

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/extender"
	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
)

// TestVolcanoInformersWithoutPodGroups: an extender allowed to read queues but not PodGroups still starts
// (an informer that cannot list would never sync) and enforces the queues' card quotas; one allowed neither
// runs without card quota.
func TestVolcanoInformersWithoutPodGroups(t *testing.T) {
	queue := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
		"metadata": map[string]any{"name": "q1", "annotations": map[string]any{codec.CardQuotaAnnotation: `{"NVIDIA-H200":1}`}}}}
	kinds := map[schema.GroupVersionResource]string{snapshot.QueueGVR: "QueueList", snapshot.PodGroupGVR: "PodGroupList"}
	forbid := func(resource string) k8stesting.ReactionFunc {
		return func(k8stesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "scheduling.volcano.sh", Resource: resource}, "", nil)
		}
	}
	for _, tt := range []struct {
		name      string
		forbidden []string
		wantOn    bool
	}{
		{"queues but no PodGroups", []string{"podgroups"}, true},
		{"neither", []string{"queues", "podgroups"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), kinds, queue.DeepCopy())
			for _, r := range tt.forbidden {
				dyn.PrependReactor("list", r, forbid(r))
			}
			st := extender.NewState(engine.DefaultConfig())
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			on, err := extender.StartVolcanoInformers(ctx, dyn, st, nil)
			if err != nil || on != tt.wantOn {
				t.Fatalf("on %v, err %v; want on %v", on, err, tt.wantOn)
			}
			var q *engine.Queue
			st.Read(func(c *engine.Cluster) { q = c.Queue("q1") })
			if tt.wantOn && (q == nil || q.CardQuota["NVIDIA-H200"] != 1) {
				t.Errorf("queue q1 = %+v", q)
			}
		})
	}
}
